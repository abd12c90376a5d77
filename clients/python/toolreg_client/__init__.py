"""Typed asyncio client for the toolreg sidecar."""
from ._pending import *  # noqa: F401,F403
from ._protocol import *  # noqa: F401,F403
from ._protocol import SCHEMA_METHODS
from .client import ExitInfo, ToolregClient, ToolregError, ToolregExitedError, ToolregRpcError
from .native import anthropic_request, anthropic_tool_result, openai_request, openai_tool_output

__all__ = ["ToolregClient", "ToolregError", "ToolregRpcError", "ToolregExitedError", "ExitInfo", "SCHEMA_METHODS",
           "anthropic_request", "anthropic_tool_result", "openai_request", "openai_tool_output"]
__version__ = "0.1.0"
