"""Typed asyncio client for the toolreg sidecar."""
from ._pending import *  # noqa: F401,F403
from ._protocol import *  # noqa: F401,F403
from ._protocol import SCHEMA_METHODS
from .client import ExitInfo, SecretStore, ToolregClient, ToolregError, ToolregExitedError, ToolregRpcError

__all__ = ["ToolregClient", "SecretStore", "ToolregError", "ToolregRpcError", "ToolregExitedError", "ExitInfo", "SCHEMA_METHODS"]
__version__ = "0.1.0"
