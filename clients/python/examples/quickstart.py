"""The README's example, runnable: python examples/quickstart.py [path/to/toolreg]"""
import asyncio
import os
import sys

from toolreg_client import ToolregClient

BIN = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("TOOLREG_BIN", "../../target/release/toolreg")


async def main():
    async def approve(req):  # approval/request -> approval/respond
        return "approve" if req["name"] != "delete_all" else {"decision": "deny", "reason": "no"}

    async with await ToolregClient.spawn(BIN, on_approval_request=approve,
                                         on_exit=lambda info: print("toolreg ended", info)) as toolreg:
        await toolreg.registry_register([{"name": "notes_create", "namespace": "notes",
                                          "description": "Create a note.", "inputSchema": {"type": "object"}}])
        plan = await toolreg.exposition_plan({"settings": {"enableWebSearch": True}},
                                             context_window=128_000, model="gpt-4o")
        print(plan["decision"], [t["name"] for t in plan["tools"]], plan.get("systemPrompt"))
        print(await asyncio.wait_for(toolreg.registry_list(query="note"), 5))


asyncio.run(main())
