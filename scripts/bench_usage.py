#!/usr/bin/env python3
"""Usage-aware plans (issue 28), replayed through the real binary: sessions drawn from a
simulated user over the 2,422 fixture tools, under three ways of choosing the inline tools.

- `none`: no usage; every tool is deferred behind tool_search / tool_inspect / tool_invoke.
- `alwaysLoad`: a hand-picked list, written once on day 0 (the user's five favourite tools
  then), registered `defer: "never"`, as Claude Code's `alwaysLoad` does.
- `usage`: `exposition/plan {usage: {}, session}`: the sidecar learns from the calls it runs.

The user (fixed seed): a working set of 60 tools from 4 of the fixture servers, Zipf weights
(s = 1.2: a few tools most of the time, a long tail), habits that drift (each day a 20% chance
that a favourite trades places with a tail tool; on day 15 a project change brings a fifth
server's tools to the top). 28 days, 3 sessions a day, 3 to 8 tool calls per session, one
model request per step. Days pass through `debug/usageClock` (the sidecar's usage clock; the
other strategies do not read it).

Per session each tool call is one model round trip when the tool is inline, and three when it
is deferred (tool_search, tool_inspect, tool_invoke). Reported: search round trips per session
(tool_search calls) and extra model round trips per session, the share of calls that found
their tool inline, tokens the request carries (`tokens.inline`) and what that adds to `none`'s,
and how many sessions saw their tool list change mid-session (every plan after a session's
first is sent with the first one's `ifNoneMatch`; anything but `unchanged` is a change).

    python3 scripts/bench_usage.py [path/to/toolreg]   (default target/release/toolreg)

Stdlib only.
"""
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_plan_size import Pipe, entries as fixture_entries  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SEED = 28
DAYS = 28
SESSIONS_PER_DAY = 3
CONTEXT = 128000
SCOPE = {"settings": {"enableWebSearch": False}, "knowledgeBaseIds": []}


def catalog():
    """Every fixture tool as an `auto` entry, one namespace per server; and the tools by server."""
    out, by_server = [], {}
    for e in fixture_entries():
        e = {k: v for k, v in e.items() if k != "defer"}
        out.append(e)
        by_server.setdefault(e["namespace"].removeprefix("mcp:"), []).append(e["name"])
    return out, by_server


def sample(schema, depth=0):
    """Arguments a schema accepts, as simply as possible (required properties only)."""
    if not isinstance(schema, dict) or depth > 4:
        return {}
    if "enum" in schema and schema["enum"]:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            return sample(schema[key][0], depth + 1)
    t = schema.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), "string")
    if t == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        return {k: sample(props.get(k, {}), depth + 1) for k in schema.get("required") or [] if isinstance(k, str)}
    return {"string": "x", "integer": 1, "number": 1, "boolean": True, "array": []}.get(t, "x")


class Sidecar:
    """`bench_plan_size.Pipe` with debug methods on; answers host/executeTool itself (every
    tool "runs"); `call` returns the result."""

    def __init__(self, binary):
        self.pipe = Pipe(binary, {"TOOLREG_DEBUG_METHODS": "1"})
        self.pipe.answer = lambda msg: {"content": [{"type": "text", "text": "ok"}]}

    def call(self, method, params):
        _, _, msg = self.pipe.call(method, params)
        if "error" in msg:
            raise RuntimeError(f"{method}: {msg['error']}")
        return msg["result"]

    def close(self):
        self.pipe.close()


class User:
    """A working set with Zipf weights whose order drifts day by day."""

    def __init__(self, rng, by_server):
        big = sorted(s for s, tools in by_server.items() if len(tools) >= 15)
        home = rng.sample(big, 5)
        self.later = [t for t in by_server[home[4]]][:8]  # the day-15 project's tools
        pool = [t for s in home[:4] for t in by_server[s]]
        self.order = rng.sample(pool, 60)
        self.rng = rng

    def weights(self):
        return [1 / (i + 1) ** 1.2 for i in range(len(self.order))]

    def next_day(self, day):
        if self.rng.random() < 0.2:
            i, j = self.rng.randrange(0, 5), self.rng.randrange(10, 40)
            self.order[i], self.order[j] = self.order[j], self.order[i]
        if day == 15:
            self.order = self.later[:4] + [t for t in self.order if t not in self.later[:4]]

    def draw(self):
        return self.rng.choices(self.order, weights=self.weights())[0]


def script(by_server):
    """Every session's tool calls, and the alwaysLoad list (the five favourites on day 0)."""
    rng = random.Random(SEED)
    user = User(rng, by_server)
    favourites = list(user.order[:5])
    days = []
    for day in range(DAYS):
        if day:
            user.next_day(day)
        days.append([[user.draw() for _ in range(rng.randint(3, 8))] for _ in range(SESSIONS_PER_DAY)])
    return days, favourites


def replay(binary, entries, days, strategy, always):
    args = {e["name"]: sample(e["inputSchema"]) for e in entries}
    s = Sidecar(binary)
    s.call("initialize", {"clientInfo": {"name": "bench-usage"}, "capabilities": {"hostTools": True}})
    if strategy == "alwaysLoad":
        entries = [{**e, "defer": "never"} if e["name"] in always else e for e in entries]
    for i in range(0, len(entries), 500):
        s.call("registry/register", {"entries": entries[i:i + 500]})
    base = {"scope": SCOPE, "contextWindow": CONTEXT, "model": "gpt-4o", "usageKey": "bench"}
    stats = {"sessions": 0, "calls": 0, "inline_hits": 0, "searches": 0, "extra_trips": 0, "tokens": [],
             "moved": 0, "plans": 0, "plan_ms": [], "weeks": [[0, 0] for _ in range((DAYS + 6) // 7)]}
    n = 0
    for day, sessions in enumerate(days):
        if day:
            s.call("debug/usageClock", {"advanceSecs": 86400})
        for calls in sessions:
            n += 1
            params = dict(base)
            if strategy == "usage":
                params.update({"usage": {}, "session": f"s{n}"})
            t0 = time.perf_counter()
            first = s.call("exposition/plan", params)
            stats["plan_ms"].append((time.perf_counter() - t0) * 1000)
            inline = {t["name"] for t in first["tools"]}
            stats["tokens"].append(first["tokens"]["inline"])
            moved = False

            def plan():
                nonlocal moved
                r = s.call("exposition/plan", {**params, "ifNoneMatch": first["planHash"]})
                stats["plans"] += 1
                if not r.get("unchanged"):
                    moved = True
                return r["planId"]

            plan_id = first["planId"]
            for tool in calls:
                stats["calls"] += 1
                stats["weeks"][day // 7][0] += 1
                if tool in inline:
                    stats["inline_hits"] += 1
                    stats["weeks"][day // 7][1] += 1
                    s.call("tool/invoke", {"name": tool, "arguments": args[tool], "planId": plan_id})
                else:
                    stats["searches"] += 1
                    stats["extra_trips"] += 2
                    s.call("tool/invoke", {"name": "tool_search", "arguments": {"query": tool}, "planId": plan_id})
                    plan_id = plan()
                    s.call("tool/invoke", {"name": "tool_inspect", "arguments": {"name": tool}, "planId": plan_id})
                    s.call("tool/invoke", {"name": "tool_invoke", "arguments": {"name": tool, "params": args[tool]}, "planId": plan_id})
                plan_id = plan()
            stats["sessions"] += 1
            stats["moved"] += moved
    s.close()
    return stats


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "target" / "release" / "toolreg")
    entries, by_server = catalog()
    days, always = script(by_server)
    total = sum(len(c) for d in days for c in d)
    print(f"{len(entries)} tools, {DAYS} days x {SESSIONS_PER_DAY} sessions, {total} tool calls, seed {SEED}, contextWindow {CONTEXT}")
    print(f"alwaysLoad (day-0 favourites): {', '.join(always)}")
    results = {k: replay(binary, entries, days, k, always) for k in ("none", "alwaysLoad", "usage")}
    base_tokens = statistics.mean(results["none"]["tokens"])
    base_search = results["none"]["searches"] / results["none"]["sessions"]
    print(f"{'strategy':11s} {'inline hits':>11s} {'searches/session':>16s} {'saved/session':>13s} {'extra trips/session':>19s} "
          f"{'tokens/request':>14s} {'added':>6s} {'moved mid-session':>17s} {'plan ms':>7s}")
    for k, r in results.items():
        per = r["sessions"]
        tok = statistics.mean(r["tokens"])
        print(f"{k:11s} {100 * r['inline_hits'] / r['calls']:10.1f}% {r['searches'] / per:16.2f} {base_search - r['searches'] / per:13.2f} "
              f"{r['extra_trips'] / per:19.2f} {tok:14.0f} {tok - base_tokens:+6.0f} {r['moved']:>8d} of {per:<5d} "
              f"{statistics.median(r['plan_ms']):7.2f}")
    # By week: usage learns in the first days, the hand-picked list goes stale after the
    # day-15 project change.
    print("inline hits by week: " + "; ".join(
        f"{k} " + " ".join(f"{100 * h / c:.0f}%" for c, h in r["weeks"]) for k, r in results.items()))


if __name__ == "__main__":
    main()
