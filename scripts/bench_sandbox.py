#!/usr/bin/env python3
"""Start-up cost of the stdio sandbox (issue 40): time from `catalog/setServers` to the first
`tools/list` of a new server (the answer of `catalog/refresh`, which waits for the spawn, the
handshake and the list), with `"sandbox": true` and with `"sandbox": false`, alternating, each
server a new process. Prints the median and the spread per server kind.

    python3 scripts/bench_sandbox.py [BIN] [FIXTURE] [ROUNDS] [OLD_BIN]

With OLD_BIN (a toolreg from before issue 50, whose confined servers share the host's /tmp),
both confine every server and the comparison is BIN's against OLD_BIN's, alternating: the cost
of the private /tmp, /var/tmp, /dev/shm and the hidden /run and home (a mount namespace, a few
tmpfs and bind mounts per server).

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


old_bin = sys.argv[4] if len(sys.argv) > 4 else None


class Sidecar:
    def __init__(self, binary):
        self.p = subprocess.Popen([binary, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
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
    # (label, sidecar, sandbox): two variants measured alternately, round by round.
    if old_bin:
        variants = [("private temp", Sidecar(bin_), True), ("shared temp (OLD_BIN)", Sidecar(old_bin), True)]
    else:
        s = Sidecar(bin_)
        variants = [("sandbox on", s, True), ("off", s, False)]
    for sidecar in {id(v[1]): v[1] for v in variants}.values():
        sidecar.request("initialize", {"timeouts": {"connectMs": 30000, "listMs": 30000}})
    kinds = ["fixture"] + (["server-everything"] if os.path.exists(everything) else [])
    times = {(k, v[0]): [] for k in kinds for v in variants}
    n = 0
    for r in range(rounds + 1):  # round 0 warms the page cache and is not counted
        for kind in kinds:
            for label, s, sandbox in (variants if r % 2 else variants[::-1]):
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
                    times[(kind, label)].append(dt * 1000)
    for sidecar in {id(v[1]): v[1] for v in variants}.values():
        sidecar.request("catalog/setServers", {"servers": []})
        sidecar.p.stdin.close()
        sidecar.p.wait()
    (a, _, _), (b, _, _) = variants
    for kind in kinds:
        x, y = times[(kind, a)], times[(kind, b)]
        mx, my = statistics.median(x), statistics.median(y)
        print(f"{kind}: {a} {mx:.1f} ms (min {min(x):.1f}, max {max(x):.1f}), "
              f"{b} {my:.1f} ms (min {min(y):.1f}, max {max(y):.1f}); cost {mx - my:+.1f} ms median, {rounds} rounds")

main()
