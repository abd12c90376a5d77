"""Finding the binary and refusing a sidecar of another protocol version.

The refusal is checked against a stand-in sidecar (a few lines of Python that answer
`initialize` with another version): no second release of toolreg exists on this machine to play
the older or newer sidecar. The real binary's version is checked by every other test, which
would fail to spawn if the client refused it."""
from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from toolreg_client import PROTOCOL_VERSION, ToolregClient, ToolregProtocolVersionError, find_binary, protocol_compatible
from toolreg_client import binary as binmod

from .conftest import BIN

STAND_IN = r'''
import json, sys
def read():
    n = None
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            sys.exit(0)
        if line in (b"\r\n", b"\n"):
            break
        k, _, v = line.decode().partition(":")
        if k.lower() == "content-length":
            n = int(v)
    return json.loads(sys.stdin.buffer.read(n))
msg = read()
body = json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"protocolVersion": VERSION,
    "serverInfo": {"name": "toolreg", "version": "9.9.9"}, "capabilities": {}}}).encode()
sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
sys.stdout.buffer.flush()
read()
'''


def stand_in(tmp_path: Path, version: str) -> str:
    script = tmp_path / "old-toolreg"
    script.write_text(f"#!{sys.executable}\nVERSION = {version!r}\n{STAND_IN}")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


@pytest.mark.parametrize(
    "client,sidecar,ok",
    [("0.1", "0.1", True), ("0.1", "0.2", False), ("0.2", "0.1", False), ("1.2", "1.3", True), ("1.3", "1.2", False), ("1.0", "2.0", False), ("0.1", "x", False), ("0.1", "0.1.0", False)],
)
def test_protocol_compatibility_rule(client: str, sidecar: str, ok: bool) -> None:
    assert protocol_compatible(client, sidecar) is ok


async def test_a_sidecar_of_another_protocol_version_is_refused_with_both_versions_named(tmp_path: Path) -> None:
    other = "0.99" if PROTOCOL_VERSION != "0.99" else "0.98"
    path = stand_in(tmp_path, other)
    with pytest.raises(ToolregProtocolVersionError) as e:
        await ToolregClient.spawn(path)
    msg = str(e.value)
    assert f"speaks protocol {other}" in msg and f"speaks protocol {PROTOCOL_VERSION}" in msg and path in msg, msg


async def test_the_same_stand_in_with_our_version_is_accepted(tmp_path: Path) -> None:
    c = await ToolregClient.spawn(stand_in(tmp_path, PROTOCOL_VERSION))
    assert c.initialize_result["protocolVersion"] == PROTOCOL_VERSION
    c.kill()
    await c.wait_for_exit()


def test_find_binary_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    exe = scripts / binmod.EXE
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    monkeypatch.setattr(binmod, "_scripts_dirs", lambda: [str(scripts)])
    assert find_binary("/x/explicit", env={"TOOLREG_BIN": "/x/env"}) == "/x/explicit"
    assert find_binary(None, env={"TOOLREG_BIN": "/x/env"}) == "/x/env"
    assert find_binary(None, env={}) == str(exe)
    exe.unlink()
    monkeypatch.setenv("PATH", str(tmp_path))
    assert find_binary(None, env={}) == "toolreg"


async def test_the_real_binary_speaks_this_clients_protocol_version() -> None:
    c = await ToolregClient.spawn(BIN)
    try:
        assert c.initialize_result["protocolVersion"] == PROTOCOL_VERSION
    finally:
        assert (await c.close()).code == 0
