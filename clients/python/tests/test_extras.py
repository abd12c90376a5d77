"""Resources, resource templates, prompts and completions through the sidecar, against the REAL
binary and the reference server-everything (its resources, templates, prompts and completers)."""
from __future__ import annotations

import asyncio
import time
from typing import Any

from toolreg_client import ToolregRpcError

from .conftest import REFERENCE_SERVERS, everything_server

FEATURES = "demo://resource/static/document/features.md"


async def listed_resources(c: Any) -> Any:
    """Lists answer from the cache: waits until the server's list is known (not pending)."""
    end = time.monotonic() + 30
    while True:
        r = await c.catalog_list_resources("everything")
        if not r.get("pending") and r["resources"]:
            return r
        if time.monotonic() > end:
            raise AssertionError(f"resources still pending: {r}")
        await asyncio.sleep(0.05)


async def test_resources_templates_prompts_complete(spawn_real):
    c = (await spawn_real()).client
    try:
        await c.catalog_set_servers([everything_server()])
        listed = await listed_resources(c)
        doc = next((r for r in listed["resources"] if r["uri"] == FEATURES), None)
        assert doc is not None, [r["uri"] for r in listed["resources"]]
        assert doc["serverId"] == "everything"
        assert doc["mimeType"] == "text/markdown"
        every = await c.catalog_list_resources()
        assert any(r["uri"] == FEATURES and r["serverId"] == "everything" for r in every["resources"])

        read = await c.catalog_read_resource("everything", FEATURES)
        assert read["contents"][0]["uri"] == FEATURES
        assert read["contents"][0]["text"]

        templates = await c.catalog_list_resource_templates("everything")
        assert any(t["uriTemplate"] == "demo://resource/dynamic/text/{resourceId}" for t in templates["resourceTemplates"]), templates
        dynamic = await c.catalog_read_resource("everything", "demo://resource/dynamic/text/7")
        assert dynamic["contents"][0]["text"].startswith("Resource 7: This is a plaintext resource")

        prompts = await c.catalog_list_prompts("everything")
        assert any(p["name"] == "simple-prompt" and p["serverId"] == "everything" for p in prompts["prompts"]), prompts
        got = await c.catalog_get_prompt("everything", "completable-prompt", {"department": "Sales", "name": "Eve"})
        assert got["messages"][0]["content"]["text"] == "Please promote Eve to the head of the Sales team."

        done = await c.catalog_complete(
            "everything",
            {"type": "ref/prompt", "name": "completable-prompt"},
            {"name": "name", "value": ""},
            {"arguments": {"department": "Engineering"}},
        )
        assert done["completion"]["values"] == ["Alice", "Bob", "Charlie"]
    finally:
        await c.close()


async def test_subscribed_resource_reports_updates(spawn_real):
    updates: list[Any] = []
    c = (await spawn_real(on_resource_updated=updates.append)).client
    try:
        await c.catalog_set_servers([everything_server()])
        await listed_resources(c)
        await c.catalog_subscribe_resource("everything", FEATURES)
        # server-everything sends updates of subscribed resources once its toggle tool runs.
        registered = (await c.registry_sync_mcp())["registered"]
        toggle = next((n for n in registered if n.endswith("__toggleSubscriberUpdates")), None)
        assert toggle, registered
        r = await c.tool_invoke(toggle, {})
        assert r["isError"] is False, r
        end = time.monotonic() + 15
        while not updates:
            assert time.monotonic() < end, "no catalog/resourceUpdated"
            await asyncio.sleep(0.02)
        assert updates[0] == {"serverId": "everything", "uri": FEATURES}
        await c.catalog_unsubscribe_resource("everything", FEATURES)
    finally:
        await c.close()


async def test_server_without_prompts_is_an_error_naming_it(spawn_real):
    c = (await spawn_real()).client
    try:
        # basic-vanillajs offers tools and resources (its view), no prompts.
        script = REFERENCE_SERVERS / "server-basic-vanillajs/dist/index.js"
        await c.catalog_set_servers([{"id": "basic", "name": "basic", "enabled": True, "transport": {"type": "stdio", "command": "node", "args": [str(script), "--stdio"]}}])
        end = time.monotonic() + 15
        while True:
            try:
                r = await c.catalog_list_prompts("basic")
            except ToolregRpcError as e:
                assert e.code == -32016
                assert e.data == {"serverId": "basic", "method": "prompts/list"}
                break
            assert r.get("pending"), f"answered {r}"
            assert time.monotonic() < end, "prompts still pending"
            await asyncio.sleep(0.05)
    finally:
        await c.close()
