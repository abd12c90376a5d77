"""MCP elicitation and sampling through the host, against the real binary and the project's
fixture MCP server (`--elicit`: its tools ask the client mid-call and return what they got)."""
from __future__ import annotations

import asyncio
import json
from typing import Any

from .conftest import fixture_server


def answer_of(r: dict[str, Any]) -> Any:
    return json.loads(r["output"]["value"])


async def ready_tools(c: Any) -> dict[str, str]:
    await c.catalog_set_servers([fixture_server("--elicit")])
    assert (await c.catalog_refresh("fx"))["state"] == "ready"
    registered = (await c.registry_sync_mcp())["registered"]
    return {n.rsplit("__", 1)[1]: n for n in registered}


async def test_on_elicit_and_on_sample_answer_the_servers_questions(spawn_real):
    elicits: list[dict[str, Any]] = []
    samples: list[dict[str, Any]] = []

    def on_elicit(p):
        elicits.append(p)
        return {"action": "accept", "content": {"nick": "py", "age": 7}}

    async def on_sample(p):  # a coroutine callback works too
        samples.append(p)
        return {"role": "assistant", "content": {"type": "text", "text": "pong"}, "model": "py-model"}

    s = await spawn_real(on_elicit=on_elicit, on_sample=on_sample)
    c = s.client
    try:
        caps = [m for m in s.transcript() if m["dir"] == "in" and m["msg"].get("method") == "initialize"][0]["msg"]["params"]["capabilities"]
        assert caps["elicitation"] is True and caps["sampling"] is True
        tools = await ready_tools(c)
        asked = await c.tool_invoke(tools["ask"], {}, call_id="py-1")
        assert [(e["callId"], e["tool"], e["mode"]) for e in elicits] == [("py-1", "ask", "form")]
        assert answer_of(asked) == {
            "action": "accept",
            "content": {"nick": "py", "age": 7, "name": "Ada", "score": 9.5, "color": "blue", "subscribe": True},
        }
        sampled = await c.tool_invoke(tools["sample"], {"prompt": "ping"}, call_id="py-2")
        assert samples[0]["callId"] == "py-2" and samples[0]["request"]["messages"][0]["content"]["text"] == "ping"
        got = answer_of(sampled)
        assert got["model"] == "py-model" and got["content"] == {"type": "text", "text": "pong"}
    finally:
        assert (await c.close()).code == 0


async def test_a_withdrawn_question_cancels_on_elicit_and_the_server_hears_cancel(spawn_real):
    cancelled: list[str] = []

    async def on_elicit(p):
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.append(p["callId"])
            raise
        return {"action": "accept"}

    c = (await spawn_real(on_elicit=on_elicit, timeouts={"elicitationMs": 300})).client
    try:
        tools = await ready_tools(c)
        r = await c.tool_invoke(tools["ask"], {}, call_id="py-3")
        assert answer_of(r) == {"action": "cancel"}
        for _ in range(300):  # the cancel is delivered to the callback's task asynchronously
            if cancelled:
                break
            await asyncio.sleep(0.01)
        assert cancelled == ["py-3"]
    finally:
        await c.close()


async def test_on_roots_answers_a_2026_server_that_needs_the_roots(spawn_real):
    asked: list[dict[str, Any]] = []

    def on_roots(p):
        asked.append(p)
        return {"roots": [{"uri": "file:///py", "name": "py"}]}

    s = await spawn_real(on_roots=on_roots)
    c = s.client
    try:
        caps = [m for m in s.transcript() if m["dir"] == "in" and m["msg"].get("method") == "initialize"][0]["msg"]["params"]["capabilities"]
        assert caps["roots"] is True
        await c.catalog_set_servers([fixture_server("--modern")])
        assert (await c.catalog_refresh("fx"))["state"] == "ready"
        registered = (await c.registry_sync_mcp())["registered"]
        tool = "test_input_required_result_list_roots"
        name = [n for n in registered if n.endswith("__testInputRequiredResultListRoots")][0]  # the registry's rendering
        r = await c.tool_invoke(name, {}, call_id="py-r")
        assert r["output"]["value"] == "Roots: file:///py"
        assert asked == [{"serverId": "fx", "callId": "py-r", "tool": tool}]
    finally:
        assert (await c.close()).code == 0
