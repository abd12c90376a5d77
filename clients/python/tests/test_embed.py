"""`on_embed`: the host's embedding model behind `tool_search`, against the REAL binary.

The host's model here is a small deterministic one written for the test (a few concept
dimensions), standing in for the host's real embedding API: what is under test is the client's
plumbing (initialize sends `search.embeddings.kind = "host"`, `host/embed` reaches the callback and
its answer reaches the search), not the quality of a model (tests/semantic.rs does that with a real
one)."""
from __future__ import annotations

import asyncio
import re
import time
from typing import Any

from .conftest import entry

CONCEPTS = [{"rain", "weather", "forecast", "sunny"}, {"meeting", "schedule", "calendar", "event"}, {"email", "mail", "message"}]


def toy_vector(text: str) -> list[float]:
    v = [0.0] * len(CONCEPTS) + [0.1]
    for w in re.findall(r"[a-z]+", text.lower()):
        for i, c in enumerate(CONCEPTS):
            if w in c:
                v[i] += 1.0
    return v


async def test_on_embed_turns_on_hybrid_search(spawn_real, tmp_path):
    asked: list[dict[str, Any]] = []

    def on_embed(p: dict[str, Any]) -> dict[str, Any]:
        asked.append(p)
        return {"vectors": [toy_vector(t) for t in p["texts"]], "model": "toy-concepts"}

    s = await spawn_real(on_embed=on_embed, cache_dir=str(tmp_path / "cache"))
    c = s.client
    try:
        init = [x["msg"] for x in s.transcript() if x["dir"] == "in" and x["msg"].get("method") == "initialize"][0]
        assert init["params"]["search"] == {"embeddings": {"kind": "host"}}
        await c.registry_register(
            [
                entry("get_forecast", defer="always", description="Returns the forecast for a city."),
                entry("create_event", defer="always", description="Adds an event to the calendar."),
                entry("send_email", defer="always", description="Sends an email message."),
            ]
        )
        plan = await c.exposition_plan({}, context_window=128000)
        end = time.monotonic() + 20
        while True:
            r = await c.tool_invoke("tool_search", {"query": "will it rain in Paris tomorrow"}, plan_id=plan["planId"])
            assert r["isError"] is False, r
            sem = r["raw"]["semantic"]
            if sem["embedded"] == 3 and sem["used"]:
                break
            assert time.monotonic() < end, f"the pool was not embedded: {sem}"
            await asyncio.sleep(0.05)
        # No word of the query is in get_forecast's entry: only the host's vectors find it.
        assert r["raw"]["hits"][0]["name"] == "get_forecast", r["raw"]
        assert sem["model"] == "host:toy-concepts" and sem["pool"] == 3
        purposes = {p["purpose"] for p in asked}
        assert purposes == {"document", "query"}, asked
        documents = [t for p in asked if p["purpose"] == "document" for t in p["texts"]]
        assert sorted(documents) == sorted(set(documents)) and len(documents) == 3, documents
        assert any("forecast" in t for t in documents)
    finally:
        await c.close()


async def test_without_on_embed_no_search_settings_are_sent(spawn_real):
    s = await spawn_real()
    try:
        init = [x["msg"] for x in s.transcript() if x["dir"] == "in" and x["msg"].get("method") == "initialize"][0]
        assert "search" not in init["params"]
    finally:
        await s.client.close()
