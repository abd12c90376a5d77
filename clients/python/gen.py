#!/usr/bin/env python3
"""Generates toolreg_client/_protocol.py (TypedDicts) from ../../protocol/*.schema.json.

    python gen.py            write the file
    python gen.py --check    regenerate into a temp dir and fail (exit 1) on any difference

Stdlib only. Each schema file is one method: `title` is the method name, `x-kind` (`request` or
`notification`) and `x-direction` (`hostToSidecar` or `sidecarToHost`) say what it is,
`properties.params` / `properties.result` reference `$defs`.
All `$defs` are merged (a name two files define differently is prefixed with the method's name;
a definition equal to one already merged, its references compared through the names they were
merged under, is that one).
"""
from __future__ import annotations

import difflib
import json
import keyword
import os
import re
import sys
import tempfile
from pathlib import Path

PASS = "    pass\n"
HERE = Path(__file__).resolve().parent
PROTOCOL_DIR = Path(os.environ.get("TOOLREG_PROTOCOL_DIR", HERE.parent.parent / "protocol"))
OUT = HERE / "toolreg_client" / "_protocol.py"


def pascal(s: str) -> str:
    return "".join(w[:1].upper() + w[1:] for w in re.split(r"[^A-Za-z0-9]+", s) if w)


def snake(method: str) -> str:
    parts = [p for p in re.split(r"[^A-Za-z0-9]+", method) if p]
    return "_".join(re.sub(r"(?<!^)(?=[A-Z])", "_", p).lower() for p in parts)


def stable(v) -> str:
    return json.dumps(v, sort_keys=True)


def rename_refs(node, renames):
    if isinstance(node, list):
        return [rename_refs(n, renames) for n in node]
    if isinstance(node, dict):
        out = {}
        for k, v in node.items():
            if k == "$ref" and isinstance(v, str) and v.startswith("#/$defs/"):
                name = v[len("#/$defs/"):]
                out[k] = "#/$defs/" + renames.get(name, name)
            else:
                out[k] = rename_refs(v, renames)
        return out
    return node


def merged_names(defs, local, method):
    """The name each of a file's `$defs` takes in the merged `defs`: the same definition merged
    before (under its name, or prefixed by the file that merged it), else its own name when free,
    else prefixed with `method`. A definition's references name the others by their merged names,
    so the names are settled together, until none changes."""
    renames: dict[str, str] = {}
    for _ in range(len(local) + 2):
        changed = False
        for n, d in local.items():
            mine = stable(rename_refs(d, renames))
            same = [k for k in defs if (k == n or k.endswith(n)) and stable(defs[k]) == mine]
            target = n if n in same else same[0] if same else n if n not in defs else pascal(method) + n
            if renames.get(n, n) != target:
                renames[n] = target
                changed = True
        if not changed:
            break
    return {n: t for n, t in renames.items() if t != n}


class Gen:
    def __init__(self):
        self.defs: dict[str, object] = {}
        self.methods: list[dict] = []
        self.emitted: list[str] = []  # class / alias blocks in order
        self.done: set[str] = set()
        self.protocol_version: str | None = None

    def load(self):
        files = sorted(PROTOCOL_DIR.glob("*.schema.json"))
        if not files:
            sys.exit(f"gen.py: no *.schema.json in {PROTOCOL_DIR}")
        for f in files:
            schema = json.loads(f.read_text(encoding="utf-8"))
            method = schema.get("title")
            if not isinstance(method, str) or not method:
                sys.exit(f"gen.py: {f.name}: no title")
            if method == "initialize":
                self.protocol_version = schema.get("x-protocolVersion")
            kind = schema.get("x-kind")
            if kind not in ("request", "notification"):
                sys.exit(f"gen.py: {f.name}: x-kind must be 'request' or 'notification', got {kind!r}")
            direction = schema.get("x-direction")
            if direction not in ("hostToSidecar", "sidecarToHost"):
                sys.exit(f"gen.py: {f.name}: x-direction must be 'hostToSidecar' or 'sidecarToHost', got {direction!r}")
            local = schema.get("$defs", {})
            renames = merged_names(self.defs, local, method)
            for n, d in local.items():
                self.defs[renames.get(n, n)] = rename_refs(d, renames)
            props = rename_refs(schema.get("properties", {}), renames)
            entry = {"method": method, "kind": kind, "direction": direction}
            for part in ("params", "result"):
                p = props.get(part)
                if p is None:
                    entry[part] = None
                elif isinstance(p, dict) and "$ref" in p:
                    entry[part] = p["$ref"][len("#/$defs/"):]
                else:
                    name = pascal(method) + pascal(part)
                    self.defs[name] = p
                    entry[part] = name
            self.methods.append(entry)

    # -- types --------------------------------------------------------------------------------
    def ty(self, s, hint: str) -> str:
        if s is True or s == {} or not isinstance(s, dict):
            return "Any"
        if "$ref" in s:
            name = s["$ref"][len("#/$defs/"):]
            self.emit_def(name)
            return f'"{name}"'
        if "const" in s:
            return f"Literal[{json.dumps(s['const'])}]"
        if "enum" in s:
            return "Literal[" + ", ".join(json.dumps(v) for v in s["enum"]) + "]"
        for key in ("oneOf", "anyOf"):
            if key in s:
                alts = [self.ty(a, hint + self.alt_suffix(a, i)) for i, a in enumerate(s[key])]
                return self.union(alts)
        t = s.get("type")
        if isinstance(t, list):
            return self.union([self.ty({**s, "type": x}, hint) for x in t])
        if t == "string":
            return "str"
        if t == "integer":
            return "int"
        if t == "number":
            return "float"
        if t == "boolean":
            return "bool"
        if t == "null":
            return "None"
        if t == "array":
            return f"list[{self.ty(s.get('items', True), hint + 'Item')}]"
        if t == "object" or "properties" in s:
            if s.get("properties"):
                self.emit_typeddict(hint, s)
                return f'"{hint}"'
            ap = s.get("additionalProperties", True)
            return f"dict[str, {self.ty(ap, hint + 'Value') if isinstance(ap, dict) else 'Any'}]"
        return "Any"

    @staticmethod
    def alt_suffix(a, i):
        props = a.get("properties", {}) if isinstance(a, dict) else {}
        for k, v in props.items():
            if isinstance(v, dict) and isinstance(v.get("const"), str):
                return pascal(v["const"])
        if len(props) == 1:
            return pascal(next(iter(props)))
        return str(i)

    @staticmethod
    def union(alts):
        seen = []
        for a in alts:
            if a not in seen:
                seen.append(a)
        if "Any" in seen:
            return "Any"
        return seen[0] if len(seen) == 1 else "Union[" + ", ".join(seen) + "]"

    def doc(self, s, indent):
        d = s.get("description") if isinstance(s, dict) else None
        if not d:
            return ""
        d = d.replace('"""', "'''").replace("\\", "\\\\")
        lines = d.split("\n")
        return indent + '"""' + ("\n" + indent).join(lines) + '"""\n'

    def emit_def(self, name):
        if name in self.done:
            return
        self.done.add(name)
        s = self.defs[name]
        if isinstance(s, dict) and s.get("type") == "object" and s.get("properties") or (isinstance(s, dict) and s.get("type") == "object" and "additionalProperties" not in s and not any(k in s for k in ("oneOf", "anyOf"))):
            self.emit_typeddict(name, s)
        else:
            slot = len(self.emitted)
            self.emitted.append("")
            expr = self.ty(s, name)
            d = s.get("description") if isinstance(s, dict) else None
            comment = "".join(f"# {line}\n" if line else "#\n" for line in (d or "").split("\n")) if d else ""
            self.emitted[slot] = f"{comment}{name} = {expr}\n"

    def emit_typeddict(self, name, s):
        slot = len(self.emitted)
        self.emitted.append("")
        self.done.add(name)
        props = s.get("properties", {}) or {}
        required = set(s.get("required", []))
        fields = [(k, self.ty(v, name + pascal(k)), v, k in required) for k, v in props.items()]
        ok_ident = all(k.isidentifier() and not keyword.iskeyword(k) for k, *_ in fields)
        open_note = "    # Open: other keys are allowed (additionalProperties).\n" if s.get("additionalProperties") is True else ""
        body = ""
        if ok_ident:
            req = [f for f in fields if f[3]]
            opt = [f for f in fields if not f[3]]
            def block(fs):
                return "".join(f"    {k}: {t}\n{self.doc(v, '    ')}" for k, t, v, _ in fs)
            if req and opt:
                body += f"class _{name}Required(TypedDict):\n{block(req)}\n\n"
                body += f"class {name}(_{name}Required, total=False):\n{self.doc(s, '    ')}{open_note}{block(opt)}"
            elif req:
                body += f"class {name}(TypedDict):\n{self.doc(s, '    ')}{open_note}{block(req)}"
            else:
                body += f"class {name}(TypedDict, total=False):\n{self.doc(s, '    ')}{open_note}{block(opt) or PASS}"
        else:
            total = all(f[3] for f in fields)
            items = ", ".join(f"{json.dumps(k)}: {t}" for k, t, _, _ in fields)
            body += f"{name} = TypedDict({json.dumps(name)}, {{{items}}}, total={total})\n"
        self.emitted[slot] = body

    def render(self) -> str:
        for name in sorted(self.defs):
            self.emit_def(name)
        out = [
            "# GENERATED by gen.py from protocol/*.schema.json. Do not edit: run `python gen.py`.",
            "# ruff: noqa",
            "from __future__ import annotations",
            "",
            "from typing import Any, Literal, TypedDict, Union",
            "",
            "",
        ]
        if not isinstance(self.protocol_version, str):
            sys.exit("gen.py: initialize.schema.json: no x-protocolVersion")
        out += [
            "# The protocol version these types describe (MAJOR.MINOR), sent in `initialize`.",
            f"PROTOCOL_VERSION = {self.protocol_version!r}",
            "",
            "",
        ]
        text = "\n".join(out) + "\n\n".join(b.rstrip("\n") + "\n" for b in self.emitted)
        rows = []
        for m in sorted(self.methods, key=lambda m: m["method"]):
            rows.append(f"    {m['method']!r}: {{'kind': {m['kind']!r}, 'direction': {m['direction']!r}, "
                        f"'params': {m['params']!r}, 'result': {m['result']!r}, 'python_name': {snake(m['method'])!r}}},")
        text += "\n\n# Every method that has a schema file: kind, direction, params/result type names, client method name.\n"
        text += "SCHEMA_METHODS: dict[str, dict[str, Any]] = {\n" + "\n".join(rows) + "\n}\n"
        return text


def generate() -> str:
    g = Gen()
    g.load()
    return g.render()


def main():
    text = generate()
    if "--check" in sys.argv:
        with tempfile.TemporaryDirectory() as tmp:
            fresh = Path(tmp) / "_protocol.py"
            fresh.write_text(text, encoding="utf-8")
            current = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
            if current != fresh.read_text(encoding="utf-8"):
                sys.stderr.writelines(difflib.unified_diff(current.splitlines(True), text.splitlines(True), str(OUT), "generated", n=1))
                sys.exit(f"gen.py --check: {OUT.relative_to(HERE)} is out of date with protocol/*.schema.json; run `python gen.py`")
        print(f"gen.py --check: {OUT.relative_to(HERE)} is up to date")
        return
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT.relative_to(HERE)}")


if __name__ == "__main__":
    main()
