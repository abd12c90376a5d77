#!/usr/bin/env python3
"""`exposition/plan` over the 2,422 fixture tools, through the real binary over a pipe: the
result's size and the round trip (request written -> whole response read and parsed), median of
ROUNDS plans after one warm-up, for each way of asking (issue 10: lean plans, planHash,
renderings), each as a ratio to the default (lean, portable) plan of the same run, and the first
native plan of each rendering on the pipe (issue 25: nothing cached for its pool yet). Two
clocks: until the answer is parsed (Python's json.loads, a few ms a MB), and until its last byte
is read (what the sidecar and the pipe cost).

    python3 scripts/bench_plan_size.py [path/to/toolreg ...]   (default target/release/toolreg)

Several binaries may be given (e.g. a build of main first): each is measured in turn. The tools
are registered as entries (`registry/register`), one namespace per fixture server, all
`defer: "always"` so the whole catalog is deferred as with a 128k window. Stdlib only.
"""
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CATALOGS = ROOT.parent / "shared" / "fixtures" / "mcp-catalogs"
ROUNDS = int(os.environ.get("ROUNDS", "100"))


def entries():
    out, seen = [], set()
    for f in sorted(CATALOGS.glob("*.json")):
        cat = json.loads(f.read_text())
        server = cat["server"]
        for t in cat["tools"]:
            name = re.sub(r"[^A-Za-z0-9_-]", "_", f"mcp__{server}__{t['name']}")[:64]
            while name in seen:
                name = name[:60] + f"_{len(seen) % 1000:03d}"
            seen.add(name)
            out.append({"name": name, "namespace": f"mcp:{server}", "description": t.get("description") or "",
                        "inputSchema": t.get("inputSchema") or {"type": "object"}, "defer": "always"})
    return out


class Pipe:
    """The sidecar over a pipe (Content-Length frames). `answer`, when set, answers the
    sidecar's own requests (e.g. `host/executeTool`): `answer(msg)` returns the result."""

    def __init__(self, binary, env=None):
        self.p = subprocess.Popen([binary, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, env={**os.environ, "TOOLREG_LOG": "error", **(env or {})})
        self.id = 0
        self.answer = None

    def send(self, msg):
        body = json.dumps(msg).encode()
        self.p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.p.stdin.flush()

    def read_frame(self):
        length = None
        while True:
            line = self.p.stdout.readline()
            if line in (b"\r\n", b"\n"):
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        return self.p.stdout.read(length)

    def call(self, method, params):
        self.id += 1
        t0 = time.perf_counter()
        self.send({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params})
        while True:
            raw = self.read_frame()
            self.read = time.perf_counter() - t0  # the answer's last byte, before parsing it
            msg = json.loads(raw)
            if "method" in msg and "id" in msg and self.answer:
                self.send({"jsonrpc": "2.0", "id": msg["id"], "result": self.answer(msg)})
            elif "method" not in msg and msg.get("id") == self.id:
                return time.perf_counter() - t0, len(raw), msg

    def close(self):
        self.p.stdin.close()
        self.p.kill()
        self.p.wait()


def measure(binary, tools):
    pipe = Pipe(binary)
    pipe.call("initialize", {"clientInfo": {"name": "bench"}})
    for i in range(0, len(tools), 500):
        pipe.call("registry/register", {"entries": tools[i:i + 500]})
    base = {"scope": {"settings": {"enableWebSearch": False}, "knowledgeBaseIds": []}, "contextWindow": 128000, "model": "gpt-4o"}
    _, _, first = pipe.call("exposition/plan", base)
    plan_hash = first["result"].get("planHash")
    cases = [("default", {})]
    first_native = []
    if plan_hash:  # a 0.2 build
        cases += [
            ('include ["perTool", "deferred"]', {"include": ["perTool", "deferred"]}),
            ("ifNoneMatch (unchanged)", {"ifNoneMatch": plan_hash}),
            ('render "anthropic"', {"render": "anthropic"}),
            ('render "openai"', {"render": "openai"}),
        ]
        # Issue 55's renderings, when the build has them (an older one answers -32602).
        _, _, probe = pipe.call("exposition/plan", {**base, "render": "gemini"})
        if "result" in probe:
            cases += [('render "gemini"', {"render": "gemini"}), ('render "openai", strict', {"render": "openai", "strict": True})]
    if plan_hash:
        # The first plan of each rendering on this pipe (nothing cached for its pool yet), then
        # an unchanged one (the host sends the planHash it holds).
        for render in ("anthropic", "openai"):
            dt, size, msg = pipe.call("exposition/plan", {**base, "render": render})
            first_native.append((f'first render "{render}"', size, dt, pipe.read))
            cases.append((f'render "{render}", ifNoneMatch', {"render": render, "ifNoneMatch": msg["result"]["planHash"]}))
        if any(label == 'render "gemini"' for label, _ in cases):
            dt, size, msg = pipe.call("exposition/plan", {**base, "render": "openai", "strict": True})
            first_native.append(('first render "openai", strict', size, dt, pipe.read))
            fns = [m for t in msg["result"]["request"]["tools"] for m in (t.get("tools", []) if t["type"] == "namespace" else [t]) if m.get("type") == "function"]
            print(f"  openai strict: {sum(1 for f in fns if f.get('strict'))} of {len(fns)} functions strict")
    rows = []
    for label, extra in cases:
        params = {**base, **extra}
        pipe.call("exposition/plan", params)  # warm-up
        times, reads, size = [], [], 0
        for _ in range(ROUNDS):
            dt, size, msg = pipe.call("exposition/plan", params)
            assert "result" in msg, msg
            times.append(dt)
            reads.append(pipe.read)
        rows.append((label, size, statistics.median(times), statistics.median(reads)))
    pipe.close()
    return rows, first_native


def main():
    binaries = sys.argv[1:] or [str(ROOT / "target" / "release" / "toolreg")]
    tools = entries()
    print(f"{len(tools)} tools, {ROUNDS} plans per row, median round trip")
    for b in binaries:
        print(f"\n{b}")
        rows, first_native = measure(b, tools)
        lean, lean_read = rows[0][2], rows[0][3]
        print(f"  {'':34s} {'size':>12s}  {'parsed':>10s}  {'ratio':>6s}  {'last byte':>10s}  {'ratio':>6s}")
        for label, size, t, r in rows:
            print(f"  {label:34s} {size / 1000:9.1f} KB  {t * 1000:7.2f} ms  {t / lean:5.1f}x  {r * 1000:7.2f} ms  {r / lean_read:5.1f}x")
        for label, size, t, r in first_native:
            print(f"  {label:34s} {size / 1000:9.1f} KB  {t * 1000:7.2f} ms  (one)   {r * 1000:7.2f} ms")


if __name__ == "__main__":
    main()
