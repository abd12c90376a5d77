#!/usr/bin/env python3
"""Start-up cost of the stdio sandbox (issue 40): time from `catalog/setServers` to the first
`tools/list` of a new server (the answer of `catalog/refresh`, which waits for the spawn, the
handshake and the list), with `"sandbox": true` and with `"sandbox": false`, alternating, each
server a new process. Prints the median and the spread per server kind.

    python3 scripts/bench_sandbox.py [BIN] [FIXTURE] [ROUNDS]

BIN defaults to target/release/toolreg, FIXTURE to toolreg-fixture-mcp beside it. The servers:
the fixture (a Rust binary: the sandbox's own cost stands out) and the npm server-everything
(a Node server as users run one), when tests/reference-servers is installed.
"""
import json
import os
import statistics
import subprocess
import sys
import time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
bin_ = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "target/release/toolreg")
fixture = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(bin_), "toolreg-fixture-mcp")
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 20
everything = os.path.join(root, "tests/reference-servers/node_modules/@modelcontextprotocol/server-everything/dist/index.js")


class Sidecar:
    def __init__(self):
        self.p = subprocess.Popen([bin_, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.id = 0

    def request(self, method, params):
        self.id += 1
        body = json.dumps({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params}).encode()
        self.p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.p.stdin.flush()
        while True:
            length = None
            while True:
                line = self.p.stdout.readline().strip()
                if not line:
                    break
                k, v = line.split(b":", 1)
                if k.lower() == b"content-length":
                    length = int(v)
            msg = json.loads(self.p.stdout.read(length))
            if msg.get("id") == self.id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg["result"]


def transport(kind):
    if kind == "fixture":
        return {"type": "stdio", "command": fixture, "args": ["--tools", "3"]}
    return {"type": "stdio", "command": "node", "args": [everything, "stdio"]}


def main():
    s = Sidecar()
    s.request("initialize", {"timeouts": {"connectMs": 30000, "listMs": 30000}})
    kinds = ["fixture"] + (["server-everything"] if os.path.exists(everything) else [])
    times = {(k, sb): [] for k in kinds for sb in (True, False)}
    n = 0
    for r in range(rounds + 1):  # round 0 warms the page cache and is not counted
        for kind in kinds:
            for sandbox in ((True, False) if r % 2 else (False, True)):
                n += 1
                sid = f"s{n}"
                server = {"id": sid, "name": sid, "transport": transport(kind), "sandbox": sandbox}
                t0 = time.perf_counter()
                s.request("catalog/setServers", {"servers": [server]})
                st = s.request("catalog/refresh", {"serverId": sid})
                dt = time.perf_counter() - t0
                assert st["state"] == "ready", st
                want = "enforced" if sandbox else "off"
                assert st.get("sandbox", {}).get("state") == want, st
                if r > 0:
                    times[(kind, sandbox)].append(dt * 1000)
    s.request("catalog/setServers", {"servers": []})
    s.p.stdin.close()
    s.p.wait()
    for kind in kinds:
        on, off = times[(kind, True)], times[(kind, False)]
        med_on, med_off = statistics.median(on), statistics.median(off)
        print(f"{kind}: sandbox on {med_on:.1f} ms (min {min(on):.1f}, max {max(on):.1f}), "
              f"off {med_off:.1f} ms (min {min(off):.1f}, max {max(off):.1f}); cost {med_on - med_off:+.1f} ms median, {rounds} rounds")


main()
