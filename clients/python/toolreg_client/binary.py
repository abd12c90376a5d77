"""Where the toolreg binary is, and whether a sidecar's protocol version is one this client speaks.

The PyPI package `toolreg` is one wheel with the binary (maturin `bindings = "bin"`, as ruff
ships) and this client: pip puts `toolreg` in the environment's scripts directory, which is
where `find_binary` looks first, so a script run with the venv's python finds it even when the
venv is not activated. An explicit path or TOOLREG_BIN wins; PATH is tried last."""
from __future__ import annotations

import os
import re
import shutil
import sys
import sysconfig
from typing import Mapping, Optional

EXE = "toolreg.exe" if sys.platform == "win32" else "toolreg"


def _scripts_dirs() -> list[str]:
    dirs = [sysconfig.get_path("scripts")]
    user_scheme = f"{os.name}_user"
    if user_scheme in sysconfig.get_scheme_names():
        dirs.append(sysconfig.get_path("scripts", scheme=user_scheme))
    return [d for d in dirs if d]


def find_binary(explicit: Optional[str] = None, env: Optional[Mapping[str, str]] = None) -> str:
    """`explicit`, else env TOOLREG_BIN, else the wheel's binary in this Python's scripts
    directory (then the user scheme's), else `toolreg` on PATH (returned as is when absent, so the
    spawn error names it)."""
    if explicit:
        return explicit
    from_env = (os.environ if env is None else env).get("TOOLREG_BIN")
    if from_env:
        return from_env
    for d in _scripts_dirs():
        candidate = os.path.join(d, EXE)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("toolreg") or "toolreg"


def protocol_compatible(client: str, sidecar: str) -> bool:
    """Whether a client of protocol `client` can talk to a sidecar of protocol `sidecar` (both
    `MAJOR.MINOR`): the same major, and a sidecar minor at least the client's; under major 0
    (before 1.0, every minor may break) the same minor."""
    c, s = re.fullmatch(r"(\d+)\.(\d+)", client), re.fullmatch(r"(\d+)\.(\d+)", sidecar)
    if not c or not s or c[1] != s[1]:
        return False
    cm, sm = int(c[2]), int(s[2])
    return cm == sm if int(c[1]) == 0 else sm >= cm
