#!/usr/bin/env python3
"""Records one short, representative session of this client against `toolreg serve --record` and
saves it as a replayable transcript (replayed by `cargo test --test transcripts`).

    python record_transcript.py [out.jsonl]

Binary: $TOOLREG_BIN (default ../../target/release/toolreg). Output default:
../../tests/transcripts/client-python.jsonl. The session: initialize with hostTools + approval,
register two host tools (one approval-gated, one `defer: "always"`), registry/list,
exposition/plan, tool/invoke of the gated tool (the callbacks approve and answer), tool/invoke of
tool_search with the planId, shutdown + exit. No MCP servers: their timing is not deterministic,
and the replay expects every run of sidecar messages exactly.
"""
from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from toolreg_client import ToolregClient  # noqa: E402


async def record(binary: str, out: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="toolreg-record-py-") as tmp:
        rec = Path(tmp) / "session.jsonl"

        def execute(p: Any) -> Any:
            return {"content": [{"type": "text", "text": f"{p['name']} done: {json.dumps(p['arguments'], separators=(',', ':'))}"}]}

        client = await ToolregClient.spawn(
            binary,
            args=["serve", "--record", str(rec)],
            client_info={"name": "toolreg-client-py", "version": "0.1.0"},
            on_approval_request=lambda req: "approve",
            on_execute_tool=execute,
        )
        try:
            await client.registry_register([
                {
                    "name": "notes_delete",
                    "namespace": "notes",
                    "description": "Delete a note by its title. Cannot be undone.",
                    "inputSchema": {"type": "object", "properties": {"title": {"type": "string", "description": "The title of the note."}}, "required": ["title"]},
                    "approval": True,
                },
                {
                    "name": "notes_archive",
                    "namespace": "notes",
                    "description": "Move a note to the archive.",
                    "inputSchema": {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]},
                    "defer": "always",
                },
            ])
            await client.registry_list()
            plan = await client.exposition_plan({}, context_window=128_000, model="gpt-4o")
            # Lean plans list no deferred names: the namespace figures say notes_archive went.
            assert plan["tokens"]["perNamespace"]["notes"]["deferred"] == 1, plan["tokens"]["perNamespace"]
            deleted = await client.tool_invoke("notes_delete", {"title": "Groceries"}, call_id="call-1")
            assert deleted["isError"] is False, deleted
            found = await client.tool_invoke("tool_search", {"query": "archive"}, call_id="call-2", plan_id=plan["planId"])
            assert found["isError"] is False and "notes_archive" in json.dumps(found.get("raw")), found
        except BaseException:
            client.kill()
            raise
        info = await client.close()
        assert info.code == 0, info
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(rec, out)
    n = sum(1 for line in out.read_text().splitlines() if line.strip())
    print(f"recorded {n} messages to {out}")


def main() -> None:
    binary = str((HERE / os.environ.get("TOOLREG_BIN", "../../target/release/toolreg")).resolve())
    out = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else (HERE / "../../tests/transcripts/client-python.jsonl").resolve()
    asyncio.run(record(binary, out))


if __name__ == "__main__":
    main()
