"""A full deferred request with the SPEC 8 method names: plan -> tool_search -> tool_inspect ->
tool_invoke, and a direct call of an approval-gated tool (approval/request -> approval/respond).
UNTESTED: `tool/invoke` and the approval flow are not built in the sidecar yet (they answer -32601
today, which this example reports and stops at).

    python examples/deferred_flow.py [path/to/toolreg]
"""
import asyncio
import json
import os
import sys

from toolreg_client import ToolregClient, ToolregRpcError

BIN = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("TOOLREG_BIN", "../../target/release/toolreg")


async def main():
    def approve(req):
        print(f"approval asked for {req['name']}({json.dumps(req['arguments'])}): {req['reason']}")
        return "approve"

    async def execute(p):
        return {"content": [{"type": "text", "text": f"host ran {p['name']} {json.dumps(p['arguments'])}"}]}

    async with await ToolregClient.spawn(BIN, on_approval_request=approve, on_execute_tool=execute) as toolreg:
        bulk = [{"name": f"crm_tool_{i}", "namespace": "crm",
                 "description": f"CRM operation {i}: " + "works on customer records with many options. " * 8,
                 "inputSchema": {"type": "object", "properties": {"customerId": {"type": "string"}}, "required": ["customerId"]}}
                for i in range(12)]
        gated = {"name": "send_invoice", "namespace": "billing", "description": "Send an invoice.", "approval": True,
                 "defer": "never", "inputSchema": {"type": "object", "properties": {"amount": {"type": "number"}}, "required": ["amount"]}}
        await toolreg.registry_register(bulk + [gated])
        # 12 CRM tools of ~100 tokens each: more than 10% of an 8k window and more than the
        # meta-tools cost, so they are deferred behind tool_search.
        plan = await toolreg.exposition_plan({}, context_window=8_000, model="gpt-4o", include=["deferred"])
        print("inline:", [t["name"] for t in plan["tools"]], "deferred:", len(plan.get("deferred") or []), "gate:", plan["decision"]["gate"])
        if not plan.get("deferred"):
            sys.exit("expected the CRM tools to be deferred")
        try:
            for call_id, (name, args) in enumerate([
                ("tool_search", {"query": "customer records", "limit": 3}),
                ("tool_inspect", {"name": "crm_tool_3"}),
                ("tool_invoke", {"name": "crm_tool_3", "params": {"customerId": "c-42"}}),
                ("send_invoice", {"amount": 12.5}),  # triggers approval/request
            ]):
                r = await toolreg.tool_invoke(name, args, call_id=f"c{call_id}", plan_id=plan["planId"])
                print(f"{name} ->", json.dumps(r["output"]), "isError", r["isError"])
        except ToolregRpcError as e:
            if e.code != -32601:
                raise
            print(f"not built in this sidecar yet: {e.method}")


asyncio.run(main())
