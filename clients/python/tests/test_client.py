from __future__ import annotations

import asyncio
import math
import time

import pytest

from toolreg_client import SCHEMA_METHODS, ExitInfo, ToolregClient, ToolregExitedError, ToolregRpcError

from .conftest import BIN, entry


# ---- lifecycle ---------------------------------------------------------------------------------

async def test_lifecycle_initialize_capabilities_close(spawn_real):
    exits: list[ExitInfo] = []
    s = await spawn_real(on_approval_request=lambda r: "approve", on_exit=exits.append, client_info={"name": "py-test", "version": "1"})
    c = s.client
    init = c.initialize_result
    assert init["serverInfo"]["name"] == "toolreg"
    assert init["protocolVersion"] == "0.3"
    assert "registry/register" in init["capabilities"]["methods"]
    info = await c.close()
    assert info.code == 0 and info.signal is None and info.expected
    assert c.is_exited
    await asyncio.sleep(0.05)
    assert len(exits) == 1
    t = s.transcript()
    init_msg = next(r["msg"] for r in t if r["msg"].get("method") == "initialize")
    assert init_msg["params"]["capabilities"] == {
        "approval": True,
        "hostTools": False,
        "repair": False,
        "elicitation": False,
        "sampling": False,
        "roots": False,
        "openUrl": False,
        "secrets": False,
    }
    assert init_msg["params"]["clientInfo"] == {"name": "py-test", "version": "1"}
    assert [r["msg"].get("method") for r in t if r["dir"] == "in"] == ["initialize", "initialized", "shutdown", "exit"]
    with pytest.raises(ToolregExitedError):
        await c.registry_list()
    assert await c.close() == info


async def test_spawn_missing_binary():
    with pytest.raises(ToolregExitedError, match="could not start.*nonexistent") as ei:
        await ToolregClient.spawn("/nonexistent/toolreg")
    assert isinstance(ei.value.__cause__, FileNotFoundError)


async def test_spawn_process_exits_before_initialize():
    exits: list[ExitInfo] = []
    with pytest.raises(ToolregExitedError) as ei:
        await ToolregClient.spawn(BIN, args=["no-such-subcommand"], on_exit=exits.append)
    assert ei.value.exit_code not in (0, None) and ei.value.method == "initialize"
    assert ei.value.stderr, "the stderr tail explains why"
    assert len(exits) == 1


async def test_context_manager(spawn_real):
    s = await spawn_real()
    async with s.client as c:
        assert (await c.registry_list(namespace="none"))["entries"] == []
    assert s.client.exit_info is not None and s.client.exit_info.code == 0


# ---- registry and exposition -------------------------------------------------------------------

async def test_register_list_select_deregister(spawn_real):
    c = (await spawn_real()).client
    try:
        reg = await c.registry_register([entry("notes_create", applies={"flag": "notesEnabled"}), entry("notes_delete", approval=True)])
        assert reg["registered"] == ["notes_create", "notes_delete"]
        lst = await c.registry_list(namespace="notes")
        assert [e["name"] for e in lst["entries"]] == ["notes_create", "notes_delete"]
        assert lst["entries"][0]["summary"] == "Tool notes_create: does something with notes."
        assert lst["entries"][0]["source"] == {"kind": "host"}
        assert lst["entries"][1]["approval"] is True
        assert any(e["name"] == "web_search" and e["source"]["kind"] == "builtin" for e in (await c.registry_list())["entries"])
        assert [e["name"] for e in (await c.registry_list(query="NOTES_DEL"))["entries"]] == ["notes_delete"]

        off = await c.registry_select_active({"settings": {"notesEnabled": False}})
        assert "notes_create" not in [e["name"] for e in off["entries"]]
        on = await c.registry_select_active({"settings": {"notesEnabled": True, "enableWebSearch": True}, "knowledgeBaseIds": ["kb1"]})
        names = [e["name"] for e in on["entries"]]
        for n in ["notes_create", "notes_delete", "web_search", "web_fetch", "kb_search", "kb_list"]:
            assert n in names
        missing = await c.registry_select_active({})
        assert any(w["name"] == "notes_create" for w in missing["warnings"])

        assert (await c.registry_deregister(["notes_create", "never_existed"]))["removed"] == ["notes_create"]
        assert [e["name"] for e in (await c.registry_list(namespace="notes"))["entries"]] == ["notes_delete"]
    finally:
        await c.close()


async def test_register_refuses_bad_entry(spawn_real):
    c = (await spawn_real()).client
    try:
        with pytest.raises(ToolregRpcError) as ei:
            await c.registry_register([entry("ok_one"), entry("bad name")])
        assert ei.value.code == -32013 and ei.value.data == {"name": "bad name"}
        assert (await c.registry_list(namespace="notes"))["entries"] == []
    finally:
        await c.close()


async def test_exposition_plan(spawn_real):
    c = (await spawn_real()).client
    try:
        big = [entry(f"big_tool_{i}", namespace="bulk", description=f"Bulk tool {i}. " + "It does a great many things with many options. " * 30) for i in range(8)]
        await c.registry_register(big + [entry("notes_delete", approval=True)])
        plan = await c.exposition_plan({}, context_window=8000, model="gpt-4o",
                                       client_tools=[{"name": "my_tool", "description": "Mine.", "inputSchema": {"type": "object"}}],
                                       include=["deferred"])
        assert isinstance(plan["planId"], str)
        assert plan["decision"] == {"deferred": True, "gate": "passed"}
        assert plan["encoding"] == {"name": "o200k_base", "exact": True}
        names = [t["name"] for t in plan["tools"]]
        assert names[0] == "my_tool" and "notes_delete" in names
        assert names[-4:] == ["tool_search", "tool_inspect", "tool_invoke", "tool_result_read"]
        assert plan["placements"]["notes_delete"]["reason"] == "approval"
        assert plan["placements"]["my_tool"]["reason"] == "client"
        assert plan["placements"]["big_tool_0"]["deferred"] is True
        assert len(plan["deferred"]) == 8
        assert "DEFERRED_TOOLS" in (plan.get("systemPrompt") or "")
        # Lean by default; an unchanged plan is three fields.
        lean = await c.exposition_plan({}, context_window=8000, model="gpt-4o")
        assert "deferred" not in lean and "perTool" not in lean["tokens"] and "big_tool_0" not in lean["placements"]
        same = await c.exposition_plan({}, context_window=8000, model="gpt-4o", if_none_match=lean["planHash"])
        assert sorted(same) == ["planHash", "planId", "unchanged"] and same.get("unchanged") is True
    finally:
        await c.close()


def test_every_schema_request_has_a_method():
    """A new protocol/*.schema.json request must get a typed method on the client."""
    for method, m in SCHEMA_METHODS.items():
        if m["kind"] == "request" and m["direction"] == "hostToSidecar" and method != "initialize":  # spawn() runs initialize
            assert hasattr(ToolregClient, m["python_name"]), f"ToolregClient lacks {m['python_name']} for {method}"


def test_every_sidecar_method_is_handled():
    """A new sidecar-to-host method in protocol/*.schema.json must be dispatched by the client."""
    import inspect

    from toolreg_client import client as client_module

    src = inspect.getsource(client_module)
    for method, m in SCHEMA_METHODS.items():
        if m["direction"] == "sidecarToHost":
            assert f'"{method}"' in src, f"toolreg_client/client.py does not handle {method}"


# ---- errors ------------------------------------------------------------------------------------

async def test_unknown_and_unbuilt_methods_are_32601(spawn_real):
    c = (await spawn_real()).client
    try:
        with pytest.raises(ToolregRpcError) as ei:
            await c.request("no/such", {})
        assert ei.value.code == -32601 and ei.value.data == {"method": "no/such"}
        answered = set(c.initialize_result["capabilities"]["methods"])
        calls = {
            "registry/resolveMcpToolIds": lambda: c.registry_resolve_mcp_tool_ids({}),
            "registry/syncMcp": lambda: c.registry_sync_mcp(),
            "tool/invoke": lambda: c.tool_invoke("x", {}),
            "catalog/setServers": lambda: c.catalog_set_servers([]),
            "catalog/listTools": lambda: c.catalog_list_tools("s"),
            "catalog/refresh": lambda: c.catalog_refresh("s"),
            "catalog/restart": lambda: c.catalog_restart("s"),
            "catalog/status": lambda: c.catalog_status(),
            "approval/respond": lambda: c.approval_respond({"approvalId": "a", "decision": "deny"}),
        }
        for method, call in calls.items():
            if method in answered:  # built since: only check the connection survives
                try:
                    await call()
                except ToolregRpcError:
                    pass
                continue
            with pytest.raises(ToolregRpcError) as ei:
                await call()
            assert ei.value.code == -32601 and ei.value.method == method
        assert (await c.registry_list(namespace="none"))["entries"] == []
    finally:
        await c.close()


async def test_bad_params_32602(spawn_real):
    c = (await spawn_real()).client
    try:
        with pytest.raises(ToolregRpcError) as ei:
            await c.request("registry/register", {"entries": 5})
        assert ei.value.code == -32602
        assert isinstance(ei.value.data["line"], int) and isinstance(ei.value.data["column"], int)
        with pytest.raises(ToolregRpcError) as ei:
            await c.request("registry/deregister", {})
        assert ei.value.code == -32602
    finally:
        await c.close()


async def test_malformed_arguments_refused_in_client(spawn_real):
    s = await spawn_real()
    c = s.client
    try:
        with pytest.raises(TypeError):
            await c.request("registry/list", 42)  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            await c.request("registry/list", [1, 2])  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            await c.registry_list(namespace={1, 2})  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            await c.request("registry/list", {"namespace": math.nan})
        cyclic: dict = {}
        cyclic["self"] = cyclic
        with pytest.raises(TypeError):
            await c.request("registry/list", cyclic)
        assert (await c.registry_list(namespace="none"))["entries"] == []
    finally:
        await c.close()
    assert len([r for r in s.transcript() if r["msg"].get("method") == "registry/list"]) == 1


async def test_handler_panic_is_32603(spawn_real):
    c = (await spawn_real()).client
    try:
        with pytest.raises(ToolregRpcError) as ei:
            await c.request("debug/panic", {})
        assert ei.value.code == -32603
        assert (await c.registry_list())["entries"]
    finally:
        await c.close()


# ---- cancellation ------------------------------------------------------------------------------

async def test_task_cancel_sends_cancel_request(spawn_real):
    s = await spawn_real()
    c = s.client
    try:
        t0 = time.monotonic()
        task = asyncio.ensure_future(c.request("debug/sleep", {"ms": 5000}))
        await asyncio.sleep(0.1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert time.monotonic() - t0 < 2
        # wait_for timeouts cancel too
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(c.request("debug/sleep", {"ms": 5000}), 0.1)
        assert (await c.registry_list(namespace="none"))["entries"] == []
        for _ in range(100):
            if len([r for r in s.transcript() if r["dir"] == "out" and r["msg"].get("error", {}).get("code") == -32800]) == 2:
                break
            await asyncio.sleep(0.02)
        t = s.transcript()
        sleeps = [r["msg"]["id"] for r in t if r["msg"].get("method") == "debug/sleep"]
        cancels = [r["msg"]["params"]["id"] for r in t if r["msg"].get("method") == "$/cancelRequest"]
        assert cancels == sleeps and len(sleeps) == 2
        assert len([r for r in t if r["dir"] == "out" and r["msg"].get("error", {}).get("code") == -32800]) == 2
    finally:
        await c.close()


# ---- crash -------------------------------------------------------------------------------------

async def test_sigkill_mid_call(spawn_real):
    exits: list[ExitInfo] = []
    c = (await spawn_real(on_exit=exits.append)).client
    p1 = asyncio.ensure_future(c.request("debug/sleep", {"ms": 5000}))
    p2 = asyncio.ensure_future(c.request("debug/sleep", {"ms": 5000}))
    await asyncio.sleep(0.1)
    c.process.kill()
    for p in (p1, p2):
        with pytest.raises(ToolregExitedError) as ei:
            await p
        e = ei.value
        assert e.signal == "SIGKILL" and e.exit_code is None and e.method == "debug/sleep"
        assert "SIGKILL" in str(e) and e.stderr
    await asyncio.sleep(0.1)
    assert len(exits) == 1 and not exits[0].expected
    with pytest.raises(ToolregExitedError):
        await c.registry_list()
    assert (await c.close()).signal == "SIGKILL"
    assert len(exits) == 1


# ---- volume and concurrency --------------------------------------------------------------------

async def test_large_frames_and_concurrent_out_of_order_answers(spawn_real):
    c = (await spawn_real()).client
    try:
        entries = [entry(f"bulk_{i:04d}", namespace="bulk", description=f"Bulk tool {i}. " + "x" * 500) for i in range(2000)]
        assert len((await c.registry_register(entries))["registered"]) == 2000
        listed = await c.registry_list(namespace="bulk")
        assert [e["name"] for e in listed["entries"]] == [e["name"] for e in entries]
        # slow requests first, fast ones after: answers come back out of order and must still match
        # long enough that the 100 lists answer first on any machine: the check is order, not speed
        slow = [asyncio.ensure_future(c.request("debug/sleep", {"ms": 5000})) for _ in range(3)]
        queries = [f"bulk_{i:04d}" for i in range(0, 2000, 20)]
        results = await asyncio.gather(*(c.registry_list(query=q) for q in queries))
        assert all(not s.done() for s in slow)
        for q, r in zip(queries, results):
            assert [e["name"] for e in r["entries"]] == [q]
        assert await asyncio.gather(*slow) == [None, None, None]
    finally:
        await c.close()
