#!/usr/bin/env python3
"""The MCP client the conformance suite drives for its client auth scenarios, played by
`toolreg mcp` (its gateway face): `gateway_adapter.py <server-url>`.

The suite starts a scenario's MCP server (with its authorization server) and runs this command
with its URL. We write a gateway config with that one HTTP server, spawn `toolreg mcp --config`
over stdio through the official MCP Python SDK (`mcp`, pinned in
tests/reference-servers/requirements.txt) as a person's MCP client would, and declare URL
elicitation. The gateway's catalog meets the server's 401 and sends the authorization page to us
as a URL-mode `elicitation/create`; we "open" it as a browser whose user clicks "allow" would (GET,
following redirects: the suite's authorization server approves at once and redirects to the
gateway's loopback listener) and accept. Then we list the tools and call them as conformance/
adapter.py does for the sidecar: the ones MCP_CONFORMANCE_CONTEXT.toolCalls names, else every
tool once (with adapter.ARGUMENTS or {}). A call refused while the server asks for more access
(step-up) is tried again once the new authorization went through.

Env: TOOLREG_BIN (default: target/release/toolreg of this repository), MCP_CONFORMANCE_SCENARIO,
MCP_CONFORMANCE_CONTEXT (JSON: pre-registered client credentials, tool calls).
Exit code 0 when every call ran; the suite judges the protocol between the gateway and its server.
"""
from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

sys.path.insert(0, str(Path(__file__).resolve().parent))
from adapter import ARGUMENTS, LIST_ONLY_SCENARIOS, ROOT, open_url, server_config  # noqa: E402

META_TOOLS = {"tool_search", "tool_inspect", "tool_invoke", "tool_exec", "tool_result_read"}
# The suite gives its client 30 s.
READY_WITHIN_S = 25.0
# Texts of a call refused because the server waits on an authorization that is running, and of
# one whose authorization ended (the flow failed, or the retry limit): wait, or give up.
WAITING = ("waiting for the user", "needs more access", "asks for more access")
GAVE_UP = ("authorization failed", "restart it to try again", "toolreg auth --config")


def log(*parts: Any) -> None:
    print("gateway-adapter:", *parts, file=sys.stderr, flush=True)


async def on_elicit(context: Any, params: Any) -> types.ElicitResult:
    if getattr(params, "mode", None) == "url":
        log("opening the authorization page")
        await asyncio.to_thread(open_url, params.url)
        return types.ElicitResult(action="accept")
    # An approval form (not expected: the config trusts this client).
    return types.ElicitResult(action="accept", content={"decision": "approve"})


def text(result: types.CallToolResult) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


async def listed(session: ClientSession) -> list[types.Tool]:
    return [t for t in (await session.list_tools()).tools if t.name not in META_TOOLS]


async def wait_listed(session: ClientSession) -> list[types.Tool]:
    """Lists until the server's tools are there, or its authorization has ended without them."""
    end = time.monotonic() + READY_WITHIN_S
    while time.monotonic() < end:
        tools = await listed(session)
        if tools:
            return tools
        probe = await session.call_tool("mcp__conformance__probe", {})
        said = text(probe)
        # A refusal while the flow runs names `toolreg auth` too (for a person whose client did
        # not show the page): it is waiting, not given up.
        if probe.is_error and any(g in said for g in GAVE_UP) and not any(w in said for w in WAITING):
            log("gave up:", said[:300])
            return []
        await asyncio.sleep(0.2)
    return []


async def call(session: ClientSession, name: str, args: dict[str, Any]) -> types.CallToolResult:
    """A call, tried again while a step-up authorization runs."""
    end = time.monotonic() + READY_WITHIN_S
    r = await session.call_tool(name, args)
    while r.is_error and any(w in text(r) for w in WAITING) and time.monotonic() < end:
        await asyncio.sleep(0.2)
        r = await session.call_tool(name, args)
    return r


async def run(url: str) -> int:
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    binary = os.environ.get("TOOLREG_BIN") or str(ROOT / "target" / "release" / "toolreg")
    log("scenario", scenario or "(none)", "url", url)
    work = tempfile.mkdtemp(prefix="toolreg-gateway-conformance-")
    config = {
        "servers": [server_config(url, context, scenario)],
        # Tools listed at once under their own names; the suite's tools are the test's own.
        "gateway": {"cacheDir": os.path.join(work, "state"), "defer": "never", "toolNames": "upstream", "trustedClient": True},
    }
    path = os.path.join(work, "gateway.json")
    with open(path, "w") as f:
        json.dump(config, f)
    server = StdioServerParameters(command=binary, args=["mcp", "--config", path], env={**os.environ, "TOOLREG_LOG": os.environ.get("TOOLREG_LOG", "info")})
    failed = 0
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write, elicitation_callback=on_elicit) as session:
            await session.initialize()
            tools = await wait_listed(session)
            log("listed", [t.name for t in tools])
            if not tools:
                return 1
            if scenario in LIST_ONLY_SCENARIOS:
                return 0
            calls = [(c["name"], c.get("arguments") or {}) for c in context.get("toolCalls") or []]
            calls = calls or [(t.name, ARGUMENTS.get(t.name, {})) for t in tools]
            for name, args in calls:
                r = await call(session, name, args)
                log("called", name, "isError" if r.is_error else "ok", text(r)[:300])
                failed += bool(r.is_error)
    return 1 if failed else 0


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: gateway_adapter.py <mcp-server-url>", file=sys.stderr)
        return 2
    return asyncio.run(run(sys.argv[1]))


if __name__ == "__main__":
    sys.exit(main())
