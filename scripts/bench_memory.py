#!/usr/bin/env python3
"""Resident memory of the sidecar at three points (issue 25 §4), read from /proc/PID/status:
idle (before `initialize`), after `initialize` once the default tokenizer has loaded, and with
the 2,422 fixture tools registered (as `scripts/bench_plan_size.py` registers them: one
namespace per fixture server, all deferred) plus a plan in every rendering (portable, anthropic,
openai) and a `tool_search` (which builds the plan's search index). VmRSS is the resident set
then; VmHWM the peak so far.

    python3 scripts/bench_memory.py [path/to/toolreg ...]   (default target/release/toolreg)

Several binaries may be given (e.g. a build of main first): each is measured in turn. Stdlib only.
Each binary is first dropped from the page cache (`sync`, then `posix_fadvise(DONTNEED)`): how many
of its pages one fault maps depends on how they came into the cache (a file just written by `cp`
or the linker shows megabytes more idle), so each start finds it as an installed binary is found.
"""
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_plan_size import ROOT, Pipe, entries  # noqa: E402


def status(pid):
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(("VmRSS:", "VmHWM:")):
            name, value = line.split(":")
            fields[name] = int(value.split()[0]) / 1024
    return fields["VmRSS"], fields["VmHWM"]


def evict(binary):
    os.sync()
    fd = os.open(binary, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def measure(binary, tools):
    evict(binary)
    pipe = Pipe(binary)
    time.sleep(0.3)
    idle = status(pipe.p.pid)
    pipe.call("initialize", {"clientInfo": {"name": "bench"}})
    time.sleep(1.5)  # the default encoding loads in the background
    tokenizer = status(pipe.p.pid)
    for i in range(0, len(tools), 500):
        pipe.call("registry/register", {"entries": tools[i:i + 500]})
    base = {"scope": {"settings": {"enableWebSearch": False}, "knowledgeBaseIds": []}, "contextWindow": 128000, "model": "gpt-4o"}
    _, _, plan = pipe.call("exposition/plan", base)
    for render in ("anthropic", "openai"):
        _, _, msg = pipe.call("exposition/plan", {**base, "render": render})
        assert "result" in msg, msg
    _, _, found = pipe.call("tool/invoke", {"name": "tool_search", "arguments": {"query": "create an issue"},
                                            "callId": "call-1", "planId": plan["result"]["planId"]})
    assert "result" in found, found
    time.sleep(1.0)
    loaded = status(pipe.p.pid)
    pipe.close()
    return idle, tokenizer, loaded


def main():
    binaries = sys.argv[1:] or [str(ROOT / "target" / "release" / "toolreg")]
    tools = entries()
    print(f"{len(tools)} tools; MiB resident (VmRSS) and peak so far (VmHWM)")
    for b in binaries:
        idle, tokenizer, loaded = measure(b, tools)
        print(f"\n{b}")
        for label, (rss, hwm) in [("idle, before initialize", idle), ("after initialize (tokenizer loaded)", tokenizer),
                                  ("2,422 tools, plans in 3 renderings, search index", loaded)]:
            print(f"  {label:50s} {rss:7.1f} MiB  (peak {hwm:.1f})")


if __name__ == "__main__":
    main()
