"""MCP authorization through the client's callbacks, against the real binary and the project's
fixture MCP server in its OAuth mode (its own authorization server): `on_open_url` plays a browser
whose user clicks "allow", `secrets` keeps the tokens."""
from __future__ import annotations

import asyncio
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any


from toolreg_client import SecretStore

from .conftest import FIXTURE_MCP


def start_oauth_fixture(tmp: Path) -> tuple[subprocess.Popen[bytes], str]:
    port_file = tmp / "port"
    proc = subprocess.Popen([FIXTURE_MCP, "--http", "127.0.0.1:0", "--port-file", str(port_file), "--tools", "1", "--oauth"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    end = time.monotonic() + 20
    while not port_file.exists():
        assert time.monotonic() < end, "the OAuth fixture did not start"
        time.sleep(0.02)
    return proc, port_file.read_text()


class Keychain(SecretStore):
    """An async store, as a keychain binding would be."""

    def __init__(self) -> None:
        super().__init__()
        self.sets = 0

    async def set(self, key: str, value: str) -> None:  # type: ignore[override]
        self.sets += 1
        self._values[key] = value


async def test_open_url_and_secrets_callbacks_authorize_a_server(spawn_real: Any, tmp_path: Path) -> None:
    fixture, url = start_oauth_fixture(tmp_path)
    opened: list[dict[str, Any]] = []
    keychain = Keychain()

    def browse(params: Any) -> None:
        opened.append(dict(params))
        # A browser: the authorization page redirects to the sidecar's loopback listener.
        with urllib.request.urlopen(params["url"], timeout=10) as r:
            r.read()

    async def on_open_url(params: Any) -> None:
        await asyncio.to_thread(browse, params)

    try:
        s = await spawn_real(on_open_url=on_open_url, secrets=keychain)
        c = s.client
        await c.catalog_set_servers([{"id": "web", "name": "Web", "enabled": True, "trust": "auto",
                                      "transport": {"type": "http", "url": url}}])  # type: ignore[list-item]
        end = time.monotonic() + 20
        status: dict[str, Any] = {}
        while time.monotonic() < end:
            status = dict(next(x for x in (await c.catalog_status())["servers"] if x["id"] == "web"))
            if status["state"] == "ready":
                break
            await asyncio.sleep(0.05)
        assert status["state"] == "ready", status
        assert [o["serverId"] for o in opened] == ["web"]
        assert keychain.sets >= 1
        saved = keychain._values["toolreg/oauth/web"]
        assert "access-" in saved  # the fixture's token, kept by the host
        await c.registry_sync_mcp()
        r = await c.tool_invoke("mcp__web__echo", {"text": "hi"})
        assert not r.get("isError"), r
        await c.close()
        # The transcript shows that secrets were stored, never what.
        text = s.record.read_text()
        assert "host/secrets/set" in text
        assert "access-" not in text and "refresh-" not in text
    finally:
        fixture.kill()
        fixture.wait()
