"""Typed asyncio client for the toolreg sidecar."""
# Before the imports: client.py reads it. Cargo.toml's version, copied by scripts/version.py.
__version__ = "0.1.0"

from ._pending import *  # noqa: F401,F403,E402
from ._protocol import *  # noqa: F401,F403,E402
from ._protocol import PROTOCOL_VERSION, SCHEMA_METHODS  # noqa: E402
from .binary import find_binary, protocol_compatible  # noqa: E402
from .native import anthropic_request, anthropic_tool_result, gemini_config, openai_request, openai_tool_output  # noqa: E402
from .client import (  # noqa: E402
    ExitInfo,
    SecretStore,
    ToolregClient,
    ToolregError,
    ToolregExitedError,
    ToolregProtocolVersionError,
    ToolregRpcError,
)

__all__ = [
    "ToolregClient",
    "SecretStore",
    "ToolregError",
    "ToolregRpcError",
    "ToolregExitedError",
    "ToolregProtocolVersionError",
    "ExitInfo",
    "SCHEMA_METHODS",
    "PROTOCOL_VERSION",
    "find_binary",
    "protocol_compatible",
    "anthropic_request",
    "anthropic_tool_result",
    "gemini_config",
    "openai_request",
    "openai_tool_output",
]
