#!/usr/bin/env python3
"""What marking tools for the provider's own code execution (`exposition/plan {programmatic: {}}`,
issue 27) costs up front: o200k counts of the rendered request (`tokens.inline`) and its size in
bytes, with and without the marks, for both native renderings, on a registry of 10 inline and 50
deferred tools (the deferred ones are carried in the request but not shown to the model up front).

    python3 scripts/bench_programmatic.py [path/to/toolreg]   (default target/release/toolreg)

Stdlib only (the Content-Length client of bench_plan_size.py).
"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_plan_size import ROOT, Pipe  # noqa: E402


def entries():
    return [{"name": f"crm_tool_{i:02d}", "namespace": f"mcp:crm{i % 4}", "defer": "always" if i >= 10 else "never",
             "description": f"CRM operation {i} on customer records.",
             "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}}
            for i in range(60)]


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "target" / "release" / "toolreg")
    pipe = Pipe(binary)
    pipe.call("initialize", {"clientInfo": {"name": "bench"}})
    pipe.call("registry/register", {"entries": entries()})
    base = {"scope": {"settings": {}, "knowledgeBaseIds": []}, "contextWindow": 128000, "model": "gpt-4o"}
    print("rendering   tokens.inline (plain -> marked)   request bytes (plain -> marked)")
    for render in ("anthropic", "openai"):
        plain = pipe.call("exposition/plan", {**base, "render": render})[2]["result"]
        marked = pipe.call("exposition/plan", {**base, "render": render, "programmatic": {}})[2]["result"]
        a, b = plain["tokens"]["inline"], marked["tokens"]["inline"]
        sa, sb = len(json.dumps(plain["request"])), len(json.dumps(marked["request"]))
        print(f"{render:10s}  {a:6d} -> {b:6d} (+{b - a})              {sa:7d} -> {sb:7d} (+{sb - sa})")
    pipe.close()


if __name__ == "__main__":
    main()
