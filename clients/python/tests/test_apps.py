"""MCP Apps through the client, against the REAL binary and the ext-apps example servers
basic-vanillajs and system-monitor (tests/reference-servers): `ui` on tools, views read with
`catalog_read_resource`, a view's calls with `tool_invoke(..., app=...)`."""
from __future__ import annotations

import asyncio
import time
from typing import Any

from .conftest import REFERENCE_SERVERS

VIEW_MIME = "text/html;profile=mcp-app"


def server(id: str, pkg: str) -> dict[str, Any]:
    script = REFERENCE_SERVERS / pkg / "dist/index.js"
    assert script.exists(), f"no {script}: run npm ci --prefix tests/reference-servers"
    return {"id": id, "name": id, "enabled": True, "transport": {"type": "stdio", "command": "node", "args": [str(script), "--stdio"]}}


async def ready(c: Any, ids: list[str]) -> None:
    end = time.monotonic() + 30
    for sid in ids:
        while (await c.catalog_list_tools(sid))["state"] != "ready":
            assert time.monotonic() < end, f"{sid} not ready"
            await asyncio.sleep(0.05)


async def test_view_tools_and_app_calls(spawn_real):
    c = (await spawn_real(capabilities={"apps": {"mimeTypes": [VIEW_MIME]}})).client
    try:
        await c.catalog_set_servers([server("basic", "server-basic-vanillajs"), server("monitor", "server-system-monitor")])
        await ready(c, ["basic", "monitor"])
        await c.registry_sync_mcp()
        entries = (await c.registry_list())["entries"]
        by_tool = {e["source"]["toolName"]: e for e in entries if e.get("source", {}).get("kind") == "mcp"}
        get_time, poll = by_tool["get-time"], by_tool["poll-system-stats"]
        assert get_time["ui"]["resourceUri"] == "ui://get-time/mcp-app.html"
        assert poll["ui"]["visibility"] == ["app"]

        r = await c.tool_invoke(get_time["name"], {})
        assert r["isError"] is False, r
        assert r["ui"] == {"serverId": "basic", "resourceUri": "ui://get-time/mcp-app.html"}
        view = await c.catalog_read_resource("basic", "ui://get-time/mcp-app.html")
        assert view["contents"][0]["mimeType"] == VIEW_MIME

        from_view = await c.tool_invoke(poll["name"], {}, app={"serverId": "monitor"})
        assert from_view["isError"] is False, from_view
        assert isinstance(from_view["raw"]["structuredContent"]["memory"]["usedPercent"], (int, float))
        assert (await c.tool_invoke(poll["name"], {}))["isError"] is True
        other = await c.tool_invoke(poll["name"], {}, app={"serverId": "basic"})
        assert other["isError"] is True
        assert "its own server" in str(other["output"]["value"])
    finally:
        await c.close()
