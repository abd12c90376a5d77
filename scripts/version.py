#!/usr/bin/env python3
"""One version for the crate and both client packages, written in one place: Cargo.toml's
`[package] version`. This copies it where npm and the Python client's dev project need a literal
(clients/typescript/package.json and its lock, clients/python/pyproject.toml, toolreg_client's
`__version__`); the PyPI wheel takes it from Cargo.toml through maturin.
  scripts/version.py           write the copies
  scripts/version.py --check   fail, naming each file, when a copy differs (clients/test.sh runs it)
"""
from __future__ import annotations

import json
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def crate_version() -> str:
    return str(tomllib.loads((ROOT / "Cargo.toml").read_text())["package"]["version"])


def copies(version: str) -> dict[Path, str]:
    """Each file that holds a copy, with its text as it should be."""
    out: dict[Path, str] = {}
    pkg = ROOT / "clients/typescript/package.json"
    data = json.loads(pkg.read_text())
    data["version"] = version
    out[pkg] = json.dumps(data, indent=2) + "\n"
    lock = ROOT / "clients/typescript/package-lock.json"
    data = json.loads(lock.read_text())
    data["version"] = version
    data["packages"][""]["version"] = version
    out[lock] = json.dumps(data, indent=2) + "\n"
    for rel, pattern, line in [
        ("clients/python/pyproject.toml", r'(?m)^version = ".*"$', f'version = "{version}"'),
        ("clients/python/toolreg_client/__init__.py", r'(?m)^__version__ = ".*"$', f'__version__ = "{version}"'),
    ]:
        path = ROOT / rel
        text, n = re.subn(pattern, line, path.read_text(), count=1)
        if n != 1:
            sys.exit(f"version.py: no version line in {rel}")
        out[path] = text
    return out


def main() -> int:
    version = crate_version()
    stale = [p for p, text in copies(version).items() if p.read_text() != text]
    if "--check" in sys.argv[1:]:
        for p in stale:
            print(f"version.py: {p.relative_to(ROOT)} does not say {version} (Cargo.toml's); run scripts/version.py", file=sys.stderr)
        return 1 if stale else 0
    for p, text in copies(version).items():
        p.write_text(text)
    print(f"version {version}: {len(stale)} file(s) updated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
