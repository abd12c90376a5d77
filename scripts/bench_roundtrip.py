#!/usr/bin/env python3
"""The trivial round trip as a Python host sees it: toolreg against a bare pipe echo.

    python3 scripts/bench_roundtrip.py BIN [ROUNDS]

A host writes one framed `registry/list {"namespace": "none"}` request and reads the framed
answer, the header line by line and then the body, as most hosts do (through Python's buffered
pipe: one `read` fills its buffer with whatever has arrived). 2,000 times; the median of the
last 90%. Then the same frames through `cat`, which echoes each one back. Three rounds (ROUNDS to
change it), each with fresh processes; prints every round and the median ratio.
`cargo bench --bench roundtrip` measures the same thing from Rust (BENCHMARKS.md).
Plain python3, stdlib only.
"""

import json
import statistics
import subprocess
import sys
import time

TRIPS = 2000


def frame(body):
    data = json.dumps(body, separators=(",", ":")).encode()
    return b"Content-Length: %d\r\n\r\n" % len(data) + data


def read_frame(out):
    length = None
    while True:
        line = out.readline()
        if not line:
            raise EOFError("the process closed its stdout")
        line = line.strip()
        if not line:
            break
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    return out.read(length)


def median_trip(cmd, initialize):
    """The median round trip over the last 90% of TRIPS, in seconds."""
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    if initialize:
        proc.stdin.write(frame({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}))
        proc.stdin.flush()
        read_frame(proc.stdout)
    requests = [frame({"jsonrpc": "2.0", "id": i + 1, "method": "registry/list", "params": {"namespace": "none"}}) for i in range(TRIPS)]
    trips = []
    for request in requests:
        start = time.perf_counter()
        proc.stdin.write(request)
        proc.stdin.flush()
        read_frame(proc.stdout)
        trips.append(time.perf_counter() - start)
    proc.stdin.close()
    proc.wait()
    return statistics.median(trips[TRIPS // 10 :])


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    binary = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    ratios = []
    for i in range(rounds):
        tool = median_trip([binary, "serve"], initialize=True)
        echo = median_trip(["cat"], initialize=False)
        ratios.append(tool / echo)
        print(f"round {i + 1}: toolreg {tool * 1e6:.1f} us, cat {echo * 1e6:.1f} us, ratio {tool / echo:.2f}")
    print(f"median ratio: {statistics.median(ratios):.2f}")


if __name__ == "__main__":
    main()
