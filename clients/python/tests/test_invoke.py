"""tool/invoke and the reverse traffic it causes, against the REAL binary: host tools
(host/executeTool), approval (approval/request -> approval/respond), repair (host/repairToolCall)
and the meta-tools. Skipped when the binary does not answer tool/invoke."""
from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from .conftest import entry


def text(o: dict[str, Any]) -> str:
    return str(o["value"]) if o["type"] in ("text", "error-text") else json.dumps(o["value"])


async def spawn_invoking(spawn_real, **kw):
    s = await spawn_real(**kw)
    assert "tool/invoke" in s.client.initialize_result["capabilities"]["methods"], "the sidecar must answer tool/invoke"
    return s


async def test_host_tool_runs_through_execute_tool(spawn_real):
    calls = []

    async def execute(p):
        calls.append(p)
        return {"content": [{"type": "text", "text": f"note {p['arguments']['title']} created"}]}

    s = await spawn_invoking(spawn_real, on_execute_tool=execute)
    c = s.client
    try:
        await c.registry_register([entry("notes_create", defer="never")])
        r = await c.tool_invoke("notes_create", {"title": "Hi"}, call_id="call-1")
        assert r["isError"] is False, r
        assert "note Hi created" in text(r["output"])
        assert calls == [{"name": "notes_create", "arguments": {"title": "Hi"}, "callId": "call-1"}]
    finally:
        await c.close()


async def test_host_tool_failure_is_an_error_result(spawn_real):
    def execute(p):
        raise OSError("disk full")

    c = (await spawn_invoking(spawn_real, on_execute_tool=execute)).client
    try:
        await c.registry_register([entry("notes_create", defer="never")])
        r = await c.tool_invoke("notes_create", {"title": "Hi"}, call_id="call-2")
        assert r["isError"] is True and "disk full" in text(r["output"])
    finally:
        await c.close()


async def test_approval_flow(spawn_real):
    asked = []
    ran = []

    async def approve(req):
        asked.append(req)
        return "approve" if req["arguments"]["title"] == "ok" else {"decision": "deny", "reason": "user said no"}

    async def execute(p):
        ran.append(p)
        return {"content": [{"type": "text", "text": "deleted"}]}

    s = await spawn_invoking(spawn_real, on_approval_request=approve, on_execute_tool=execute)
    c = s.client
    try:
        await c.registry_register([entry("notes_delete", approval=True)])
        ok = await c.tool_invoke("notes_delete", {"title": "ok"}, call_id="call-3")
        assert ok["isError"] is False, ok
        assert len(ran) == 1
        no = await c.tool_invoke("notes_delete", {"title": "keep"}, call_id="call-4")
        assert no["isError"] is True and len(ran) == 1
        assert [(a["name"], a["callId"]) for a in asked] == [("notes_delete", "call-3"), ("notes_delete", "call-4")]
        responds = [r["msg"]["params"] for r in s.transcript() if r["dir"] == "in" and r["msg"].get("method") == "approval/respond"]
        assert responds == [
            {"approvalId": asked[0]["approvalId"], "decision": "approve"},
            {"approvalId": asked[1]["approvalId"], "decision": "deny", "reason": "user said no"},
        ]
    finally:
        await c.close()


async def test_an_approval_remembered_for_the_session(spawn_real):
    asked, ran = [], []

    s = await spawn_invoking(spawn_real, on_approval_request=lambda req: asked.append(req) or {"decision": "approve", "remember": "session"},
                             on_execute_tool=lambda p: ran.append(p) or {"content": []})
    c = s.client
    try:
        await c.registry_register([entry("notes_delete", approval=True)])
        first = await c.tool_invoke("notes_delete", {"title": "a"})
        second = await c.tool_invoke("notes_delete", {"title": "b"})
        assert (first.get("approvedBy"), second.get("approvedBy")) == ("host", "grant")
        assert (len(asked), len(ran)) == (1, 2)
        grants = (await c.approval_grants())["grants"]
        assert [(g["tool"], g["lasts"]) for g in grants] == [("notes_delete", "session")]
        assert await c.approval_revoke("notes_delete") == {"revoked": 1}
        await c.tool_invoke("notes_delete", {"title": "c"})
        assert len(asked) == 2, "asked again after the revocation"
    finally:
        await c.close()


async def test_repair_through_host(spawn_real):
    repairs = []
    ran = []

    def repair(p):
        repairs.append(p)
        return {"arguments": {"title": "repaired"}}

    def execute(p):
        ran.append(p["arguments"])
        return {"content": [{"type": "text", "text": "ok"}]}

    c = (await spawn_invoking(spawn_real, on_repair_tool_call=repair, on_execute_tool=execute)).client
    try:
        await c.registry_register([entry("notes_create", defer="never")])
        r = await c.tool_invoke("notes_create", {"wrong": [1, 2]}, call_id="call-5")
        assert len(repairs) == 1 and repairs[0]["name"] == "notes_create" and repairs[0]["arguments"] == {"wrong": [1, 2]}
        assert r["isError"] is False, r
        assert ran == [{"title": "repaired"}]
    finally:
        await c.close()


async def test_meta_tools_with_plan_id(spawn_real):
    c = (await spawn_invoking(spawn_real, on_execute_tool=lambda p: {"content": [{"type": "text", "text": "crm ran"}]})).client
    try:
        bulk = [entry(f"crm_tool_{i}", namespace="crm", description=f"CRM operation {i} on customer records. " + "Many options. " * 60) for i in range(8)]
        await c.registry_register(bulk)
        plan = await c.exposition_plan({}, context_window=8000)
        assert plan["decision"]["deferred"] is True
        r = await c.tool_invoke("tool_search", {"query": "customer"}, plan_id=plan["planId"], call_id="m1")
        assert r["isError"] is False, r
        assert "crm_tool_" in text(r["output"])
    finally:
        await c.close()


async def test_moot_approval_is_cancelled_after_sidecar_timeout(spawn_real):
    state = {"asked": 0, "cancelled": False}

    async def slow_user(req):
        state["asked"] += 1
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            state["cancelled"] = True
            raise
        return "approve"

    s = await spawn_invoking(spawn_real, timeouts={"approvalMs": 300}, on_approval_request=slow_user,
                             on_execute_tool=lambda p: {"content": [{"type": "text", "text": "ran"}]})
    c = s.client
    try:
        await c.registry_register([entry("notes_delete", approval=True)])
        r = await c.tool_invoke("notes_delete", {"title": "x"}, call_id="slow-user")
        assert r["isError"] is True
        await asyncio.sleep(0.05)
        assert state == {"asked": 1, "cancelled": True}
        assert not [x for x in s.transcript() if x["msg"].get("method") == "approval/respond"]
    finally:
        await c.close()


async def test_cancelling_invoke_cancels_its_approval(spawn_real):
    state = {"cancelled": False}

    async def slow_user(req):
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            state["cancelled"] = True
            raise
        return "approve"

    # A host tool the host can run: the sidecar only asks to approve a call that could run.
    s = await spawn_invoking(spawn_real, on_approval_request=slow_user, on_execute_tool=lambda p: {"content": []})
    c = s.client
    try:
        await c.registry_register([entry("notes_delete", approval=True)])
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(c.tool_invoke("notes_delete", {"title": "x"}, call_id="c-abort"), 0.15)
        await asyncio.sleep(0.05)
        assert state["cancelled"] is True
        t = s.transcript()
        assert not [x for x in t if x["msg"].get("method") == "approval/respond"]
        assert len([x for x in t if x["msg"].get("method") == "$/cancelRequest"]) == 1
    finally:
        await c.close()
