#!/usr/bin/env python3
"""Records a transcript: plays a session's host messages against `toolreg serve --record`.

usage: scripts/record_session.py BINARY SESSION.jsonl OUT.jsonl

SESSION.jsonl holds one host message per line (a JSON value, or {"raw": "..."} for bytes that
are not JSON). Requests wait for their response before the next line is sent, so the recorded
order is the order a host sees. Review the recorded file before committing it.
"""
import json
import subprocess
import sys
import time


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def read_frame(stream):
    length = None
    while True:
        line = stream.readline()
        if not line:
            return None
        line = line.strip()
        if not line:
            break
        k, v = line.split(b":", 1)
        if k.strip().lower() == b"content-length":
            length = int(v)
    return json.loads(stream.read(length))


def main():
    binary, session, out = sys.argv[1:4]
    p = subprocess.Popen([binary, "serve", "--record", out], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    for line in open(session):
        line = line.strip()
        if not line:
            continue
        msg = json.loads(line)
        if isinstance(msg, dict) and set(msg) == {"raw"}:
            p.stdin.write(frame(msg["raw"].encode()))
            p.stdin.flush()
            read_frame(p.stdout)  # every raw frame in a session is answered with an error
            continue
        p.stdin.write(frame(json.dumps(msg).encode()))
        p.stdin.flush()
        if isinstance(msg, dict) and "id" in msg and "method" in msg:
            while True:
                reply = read_frame(p.stdout)
                if reply is None or reply.get("id") == msg["id"]:
                    break
        else:
            time.sleep(0.05)
    p.stdin.close()
    p.wait(timeout=10)
    print(f"recorded {out}; exit code {p.returncode}")


if __name__ == "__main__":
    main()
