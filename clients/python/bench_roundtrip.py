#!/usr/bin/env python3
"""Round-trip overhead of the client: the median time of N trivial requests
(`registry/list {namespace: "none"}`) through ToolregClient, vs the same frames written and read
on the raw pipe without the client (asyncio pipes, the same I/O the client uses; a blocking
subprocess pipe is shown too). Sequential (one request in flight), after a warm-up.

    python bench_roundtrip.py [N]
"""
from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from toolreg_client import ToolregClient  # noqa: E402

HERE = Path(__file__).resolve().parent
BIN = str((HERE / os.environ.get("TOOLREG_BIN", "../../target/release/toolreg")).resolve())
N = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
WARMUP = 200
PARAMS = {"namespace": "none"}


def frame(msg) -> bytes:
    body = json.dumps(msg, separators=(",", ":")).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


async def via_client() -> list[float]:
    c = await ToolregClient.spawn(BIN)
    times = []
    for i in range(WARMUP + N):
        t0 = time.perf_counter_ns()
        await c.registry_list(namespace="none")
        if i >= WARMUP:
            times.append((time.perf_counter_ns() - t0) / 1000)
    await c.close()
    return times


async def raw_asyncio() -> list[float]:
    p = await asyncio.create_subprocess_exec(BIN, "serve", stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert p.stdin and p.stdout

    async def call(i, method, params=None):
        msg = {"jsonrpc": "2.0", "id": i, "method": method}
        if params is not None:
            msg["params"] = params
        p.stdin.write(frame(msg))
        await p.stdin.drain()
        header = await p.stdout.readuntil(b"\r\n\r\n")
        n = int(header.split(b":", 1)[1].split(b"\r\n", 1)[0])
        return json.loads(await p.stdout.readexactly(n))

    await call(0, "initialize", {})
    times = []
    for i in range(WARMUP + N):
        t0 = time.perf_counter_ns()
        r = await call(i + 1, "registry/list", PARAMS)
        if i >= WARMUP:
            times.append((time.perf_counter_ns() - t0) / 1000)
        assert "result" in r, r
    await call(-1, "shutdown")
    p.stdin.write(frame({"jsonrpc": "2.0", "method": "exit"}))
    p.stdin.close()
    await p.wait()
    return times


def raw_blocking() -> list[float]:
    p = subprocess.Popen([BIN, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0)
    out = p.stdout

    def call(i, method, params=None):
        msg = {"jsonrpc": "2.0", "id": i, "method": method}
        if params is not None:
            msg["params"] = params
        p.stdin.write(frame(msg))
        n = None
        while True:
            line = out.readline()
            if line in (b"\r\n", b""):
                break
            k, _, v = line.partition(b":")
            if k.strip().lower() == b"content-length":
                n = int(v)
        body = b""
        while len(body) < n:
            body += out.read(n - len(body))
        return json.loads(body)

    call(0, "initialize", {})
    times = []
    for i in range(WARMUP + N):
        t0 = time.perf_counter_ns()
        call(i + 1, "registry/list", PARAMS)
        if i >= WARMUP:
            times.append((time.perf_counter_ns() - t0) / 1000)
    call(-1, "shutdown")
    p.stdin.write(frame({"jsonrpc": "2.0", "method": "exit"}))
    p.stdin.close()
    p.wait()
    return times


def fmt(xs):
    q = statistics.quantiles(xs, n=10)
    return f"median {statistics.median(xs):.1f} µs, p90 {q[-1]:.1f} µs"


def main():
    # One whole discarded pass of each variant first: the first event loop / process of a run is
    # measurably slower whichever variant goes first.
    asyncio.run(raw_asyncio()); raw_blocking(); asyncio.run(via_client())
    raw = asyncio.run(raw_asyncio())
    blocking = raw_blocking()
    cli = asyncio.run(via_client())
    print(f"python {sys.version.split()[0]}, N={N} sequential registry/list {{namespace:\"none\"}} (after {WARMUP} warm-up and a discarded pass)")
    print(f"raw pipe (asyncio):    {fmt(raw)}")
    print(f"raw pipe (blocking):   {fmt(blocking)}")
    print(f"toolreg_client:        {fmt(cli)}")
    m = statistics.median
    print(f"ratio client/raw asyncio: {m(cli) / m(raw):.2f}x (+{m(cli) - m(raw):.1f} µs per call)")
    print(f"ratio client/raw blocking: {m(cli) / m(blocking):.2f}x")


if __name__ == "__main__":
    main()
