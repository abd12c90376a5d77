#!/usr/bin/env python3
"""Writes the seed corpus of every fuzz target (fuzz/corpus/<target>/) from the recorded
transcripts (tests/transcripts) and the shared fixture catalogs (../shared/fixtures).

Deterministic: the same inputs give the same files (named by content hash), so rerunning it
changes nothing. Small on purpose (a few hundred files, each at most MAX_SEED bytes): libFuzzer
mutates from here, and long seeds only slow it down. Run from anywhere:
    python3 scripts/fuzz-seeds.py
"""
import glob
import hashlib
import json
import os
import shutil

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "..", "shared", "fixtures")
OUT = os.path.join(ROOT, "fuzz", "corpus")
MAX_SEED = 8 * 1024


class RawText(str):
    """A recorded body that is not JSON: written as it was."""


def dumps(v):
    if isinstance(v, RawText):
        return v.encode()
    return json.dumps(v, ensure_ascii=False, separators=(",", ":")).encode()


def frame(body):
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def host_messages():
    """Every message a host sent in a recorded session, in order, per session (a message the
    recorder kept as raw text, being no JSON, stays text)."""
    sessions = []
    for path in sorted(glob.glob(os.path.join(ROOT, "tests", "transcripts", "**", "*.jsonl"), recursive=True)):
        msgs = []
        for line in open(path, encoding="utf-8"):
            rec = json.loads(line)
            if "dir" in rec:  # a recorded transcript: both directions
                if rec["dir"] == "in":
                    msgs.append(rec["msg"] if "msg" in rec else RawText(rec.get("raw", "")))
            else:  # a session script: host messages only
                msgs.append(rec)
        sessions.append(msgs)
    return sessions


def catalog_tools():
    """(server name, tool) over the shared fixture catalogs, in file order."""
    out = []
    for path in sorted(glob.glob(os.path.join(FIXTURES, "mcp-catalogs", "*.json"))):
        cat = json.load(open(path, encoding="utf-8"))
        for t in cat.get("tools", []):
            out.append((cat.get("server", os.path.basename(path)), t))
    return out


def spread(items, n):
    """n items evenly spread over the list (deterministic)."""
    if len(items) <= n:
        return list(items)
    step = len(items) / n
    return [items[int(i * step)] for i in range(n)]


def codec_seeds(sessions):
    seeds = []
    for msgs in sessions:
        stream = b"".join(frame(dumps(m)) for m in msgs)
        for params in (0x07, 0x35, 0x5C, 0xFE):  # cap choice (low 3 bits) and chunking seed
            seeds.append(bytes([params]) + stream[:MAX_SEED - 1])
    edge = [
        b"Content-Length: 2\r\n\r\n{}",
        b"content-length:  5 \r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\nhello",
        b"\r\n\r\nContent-Length: 0\r\n\r\n\r\nContent-Length: 1\r\n\r\nx",
        b"Content-Length: 99999999\r\n\r\n" + b"a" * 64,
        b"Content-Length: -1\r\n\r\n",
        b"Content-Length: 3\r\nX-Other: 1\r\n\r\nabc",
        b"no colon here\r\n\r\n",
        b"Content-Length: 18446744073709551616\r\n\r\n",
        b"\xff\xfe\r\n\r\n",
        b"Content-Length: 4\r\n\r\nab",
    ]
    for e in edge:
        for params in (0x03, 0x06, 0x91):
            seeds.append(bytes([params]) + e)
    return seeds


def classify_seeds(sessions):
    seeds = []
    for msgs in sessions:
        for m in msgs:
            seeds.append(frame(dumps(m)))
    bad = [
        b"[]", b"{}", b"null", b"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"registry/list\"}]",
        b"{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"x\"}", b"{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"x\"}",
        b"{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"x\"}",
        # An integer id no f64 holds: echoed as text (a Value round-trip failed here once).
        b"{\"jsonrpc\":\"2.0\",\"id\":1" + b"6" * 400 + b",\"method\":\"x\"}", b"{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":null}",
        b"{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-1,\"message\":\"m\"}}",
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"registry/list\",\"params\":[1]}",
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"exposition/plan\",\"params\":null}",
        b"{\"jsonrpc\":\"2.0\",\"method\":\"$/cancelRequest\",\"params\":{\"id\":3}}",
        b"{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"tool/invoke\",\"params\":{\"name\":\"x\",\"arguments\":\"{\"}}",
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"0.1\"",
    ]
    for b in bad:
        seeds.append(frame(b))
        seeds.append(b)
    return seeds


def predicate_seeds(sessions):
    preds = [
        {"flag": "enableWebSearch"}, {"nonEmpty": "knowledgeBaseIds"}, {"member": "mcpToolIds"},
        {"contains": "settings.mcpToolIds"}, {"not": {"flag": "enableWebSearch"}},
        {"all": [{"flag": "enableWebSearch"}, {"nonEmpty": "knowledgeBaseIds"}]},
        {"any": [{"flag": "a.b.c"}, {"not": {"member": "ids"}}]}, {"all": []}, {"any": []},
    ]
    scopes = [{}]
    for msgs in sessions:
        for m in msgs:
            params = m.get("params") if isinstance(m, dict) else None
            scope = params.get("scope") if isinstance(params, dict) else None
            if isinstance(scope, dict) and scope not in scopes:
                scopes.append(scope)
    example = json.load(open(os.path.join(ROOT, "examples", "desktop-host.json"), encoding="utf-8"))
    if isinstance(example.get("scope"), dict):
        scopes.append(example["scope"])
    scopes.append({"settings": {"enableWebSearch": "yes", "a": {"b": {"c": True}}}, "ids": ["web_search"], "mcpToolIds": 3})
    seeds = []
    for i, p in enumerate(preds):
        for j, s in enumerate(scopes):
            if (i + j) % 2 == 0:
                seeds.append(dumps([p, s, "web_search"]))
        seeds.append(dumps(p))
    return seeds


def signature_seeds(tools):
    seeds = []
    # The largest schemas first (nesting, $ref, combinators), then a spread of the rest.
    by_size = sorted(tools, key=lambda st: -len(dumps(st[1].get("inputSchema", {}))))
    chosen = [t for _, t in by_size if len(dumps(t)) <= MAX_SEED][:30]
    chosen += [t for _, t in spread(tools, 60) if t not in chosen]
    for t in chosen:
        seeds.append(dumps({"name": t.get("name"), "description": t.get("description", "")[:200], "inputSchema": t.get("inputSchema")}))
    seeds += [
        dumps({"$ref": "#"}),
        dumps({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}),
        dumps({"type": "object", "properties": {"x": {"anyOf": [{"type": "string"}, {"$ref": "#"}]}}}),
        dumps({"type": ["object", "null"], "properties": {"a b": {"enum": ["x", 1, None]}}, "required": ["a b"]}),
        dumps({"name": "tool with spaces", "description": "*/ end comment", "inputSchema": {"type": "array", "items": {"type": "array"}}}),
    ]
    return seeds


def repair_seeds(tools):
    seeds = []
    for _, t in spread(tools, 32):
        schema = t.get("inputSchema") or {}
        props = schema.get("properties") or {}
        args = {}
        for k, p in list(props.items())[:4]:
            ty = p.get("type") if isinstance(p, dict) else None
            args[k] = {"integer": "42", "number": "1.5", "boolean": "true", "array": "[1,2]", "object": "{}"}.get(ty, "text")
        for raw in (args, json.dumps(args), {"arguments": args}):
            seed = dumps([raw, schema])
            if len(seed) <= MAX_SEED:
                seeds.append(seed)
    empty = {"type": "object", "properties": {}}
    seeds += [dumps(["", empty]), dumps([None, empty]), dumps(["{'a': 1,}", {"type": "object"}]),
              dumps(["\"{\\\"a\\\": 1}\"", {"type": "object"}]), dumps([{"a": "[\"x\"]"}, {"type": "object", "properties": {"a": {"type": "array"}}}]),
              dumps([{"args": {"q": 1}}, {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}])]
    return seeds


def wire_name_seeds(tools):
    seeds = []
    for server, t in spread(tools, 60):
        seeds.append(f"{server}\n{server}\n{t.get('name', '')}".encode())
    seeds += ["数据库\nid\n查询".encode(), b"HTTPServer\nsrv\nTwilioApiV2010--UpdateMember", b"!!\n\n?",
              ("a" * 80 + "\nid\n" + "b" * 120).encode(), "Ωmega\u200b\nx\nemoji_😀_tool".encode(), b"\n\n"]
    return seeds


def write(target, seeds):
    d = os.path.join(OUT, target)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    names = set()
    for s in seeds:
        name = hashlib.sha1(s).hexdigest()
        if name not in names:
            names.add(name)
            with open(os.path.join(d, name), "wb") as f:
                f.write(s)
    return len(names), sum(len(s) for s in {hashlib.sha1(s).hexdigest(): s for s in seeds}.values())


def main():
    sessions = host_messages()
    tools = catalog_tools()
    for target, seeds in [
        ("codec", codec_seeds(sessions)),
        ("classify", classify_seeds(sessions)),
        ("predicate", predicate_seeds(sessions)),
        ("signature", signature_seeds(tools)),
        ("repair", repair_seeds(tools)),
        ("wire_name", wire_name_seeds(tools)),
    ]:
        n, size = write(target, seeds)
        print(f"{target}: {n} seeds, {size} bytes")


if __name__ == "__main__":
    main()
