"""``exposition_definitions`` (issue 55) against the real sidecar: a plan's deferred definitions,
lean without schemas, some by name, and a plan that is gone refused."""
from __future__ import annotations

from typing import Any

import pytest

from toolreg_client import ToolregRpcError

from .conftest import entry


async def test_a_plans_deferred_definitions(spawn_real: Any) -> None:
    c = (await spawn_real()).client
    try:
        await c.registry_register([entry(f"crm_tool_{i}", defer="always") for i in range(6)] + [entry("notes_create", defer="never")])
        plan = await c.exposition_plan({})
        lean = await c.exposition_definitions(plan["planId"], schemas=False)
        assert [t["name"] for t in lean["tools"]] == [f"crm_tool_{i}" for i in range(6)]
        assert all("inputSchema" not in t for t in lean["tools"])
        assert "find it with tool_search" in (lean.get("systemPrompt") or "")
        some = await c.exposition_definitions(plan["planId"], ["crm_tool_2", "notes_create"])
        assert [t["name"] for t in some["tools"]] == ["crm_tool_2"]
        assert some["tools"][0].get("inputSchema", {}).get("required") == ["title"]
        assert some.get("missing") == ["notes_create"]
        with pytest.raises(ToolregRpcError) as gone:
            await c.exposition_definitions("no-such-plan")
        assert gone.value.code == -32011
    finally:
        await c.close()
