"""Provider-native deferral, end to end against a scripted model turn (no network): the plan is
rendered for the OpenAI Responses API (deferred functions in namespaces with
``defer_loading: true``, a client-executed ``tool_search``), and each output item the model sends
is answered through the sidecar: the search with a ``tool_search_output`` item carrying the found
tools' whole definitions, the loaded function and an approval-gated one directly by name.

    python examples/native_flow.py [path/to/toolreg]
"""
import asyncio
import json
import os
import sys

from toolreg_client import ToolregClient, openai_request, openai_tool_output

BIN = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("TOOLREG_BIN", "../../target/release/toolreg")


async def main() -> None:
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

        plan = await toolreg.exposition_plan({}, context_window=8_000, model="gpt-4o", render="openai")
        fragment = openai_request(plan)
        namespaces = [t for t in fragment["tools"] if t["type"] == "namespace"]
        print(f"request: {len(fragment['tools'])} tools ({len(namespaces)} namespaces of deferred functions), "
              f"{plan['tokens']['inline']} tokens up front")
        if not namespaces:
            sys.exit("expected the CRM tools to be deferred")
        # What the host sends: openai.responses.create(model=..., input=items, **fragment).
        items: list = [{"role": "user", "content": "Look up customer c-42, then invoice them 12.50."}]

        # Scripted model output items: a client tool search, then the loaded function, then the gated one.
        search = {"type": "tool_search_call", "call_id": "call_01", "execution": "client", "arguments": {"query": "customer records", "limit": 2}}
        found = await openai_tool_output(toolreg, plan, search)
        items += [search, found]
        loaded = found["tools"][0]["tools"][0]["name"]
        print("tool_search ->", [f["name"] for ns in found["tools"] for f in ns["tools"]])
        call = {"type": "function_call", "call_id": "call_02", "name": loaded, "arguments": json.dumps({"customerId": "c-42"})}
        ran = await openai_tool_output(toolreg, plan, call)
        items += [call, ran]
        print(f"{loaded} ->", ran["output"])
        pay = {"type": "function_call", "call_id": "call_03", "name": "send_invoice", "arguments": json.dumps({"amount": 12.5})}
        paid = await openai_tool_output(toolreg, plan, pay)
        items += [pay, paid]
        print("send_invoice ->", paid["output"])

        again = await toolreg.exposition_plan({}, context_window=8_000, model="gpt-4o", render="openai", if_none_match=plan["planHash"])
        print("next plan:", "unchanged" if again.get("unchanged") else "changed", f"({len(items)} input items so far)")
        if not again.get("unchanged"):
            sys.exit("expected the same plan")


asyncio.run(main())
