#!/usr/bin/env python3
"""Re-records the sidecar's side of tests/transcripts/*.jsonl after an intended change of what it
says (a field or a tool added): replays each transcript's host messages against BIN as
tests/transcripts.rs does, and writes back what the sidecar says now, keeping every "$any" of the
old recording. Review `git diff tests/transcripts` before committing: only the intended change
may show.

    python3 scripts/rerecord_transcripts.py target/release/toolreg [FILE...]
"""
import json
import subprocess
import sys
from pathlib import Path


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def read_message(out) -> dict:
    length = None
    while True:
        line = out.readline()
        if not line:
            raise EOFError("the sidecar closed stdout")
        line = line.strip()
        if not line:
            break
        name, _, value = line.partition(b":")
        if name.lower() == b"content-length":
            length = int(value)
    return json.loads(out.read(length))


# tests/transcripts.rs's volatile keys: their old values stay, so the diff shows only real change.
VOLATILE = {"planId", "version", "refreshedAt", "methods", "approvalId", "score"}


def merge(old, new):
    """`new`, with the old recording's "$any" and volatile values kept where they stood."""
    if old == "$any":
        return old
    if isinstance(old, dict) and isinstance(new, dict):
        return {k: (old[k] if k in VOLATILE else merge(old[k], v)) if k in old else v for k, v in new.items()}
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [merge(o, n) for o, n in zip(old, new)]
    return new


def key(msg: dict):
    return (msg.get("id"), msg.get("method"))


def rerecord(binary: str, path: Path) -> None:
    lines = [json.loads(l) for l in path.read_text().splitlines() if l.strip()]
    proc = subprocess.Popen([binary, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out_lines = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if "dir" not in line:
            out_lines.append(line)
            i += 1
            continue
        if line["dir"] == "in":
            body = line["raw"].encode() if "raw" in line else json.dumps(line["msg"], separators=(",", ":")).encode()
            proc.stdin.write(frame(body))
            proc.stdin.flush()
            out_lines.append(line)
            i += 1
            continue
        run = []
        while i < len(lines) and lines[i].get("dir") == "out":
            run.append(lines[i])
            i += 1
        got = [read_message(proc.stdout) for _ in run]
        by_key = {}
        for g in got:
            by_key.setdefault(key(g), []).append(g)
        for old in run:
            new = by_key.get(key(old["msg"]), [None]).pop(0) if by_key.get(key(old["msg"])) else None
            if new is None:
                raise SystemExit(f"{path}: no message like {old['msg']} now; got {got}")
            out_lines.append({**old, "msg": merge(old["msg"], new)})
    proc.stdin.close()
    proc.wait(timeout=10)
    path.write_text("".join(json.dumps(l, ensure_ascii=False, separators=(",", ":")) + "\n" for l in out_lines))


def main() -> None:
    binary = sys.argv[1]
    files = [Path(p) for p in sys.argv[2:]] or sorted(Path(__file__).resolve().parent.parent.joinpath("tests/transcripts").glob("*.jsonl"))
    for f in files:
        rerecord(binary, f)
        print(f"re-recorded {f}")


if __name__ == "__main__":
    main()
