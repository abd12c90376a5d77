from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable

import pytest

from toolreg_client import ToolregClient

HERE = Path(__file__).resolve().parent
CLIENT_DIR = HERE.parent
BIN = str((CLIENT_DIR / os.environ.get("TOOLREG_BIN", "../../target/release/toolreg")).resolve())
# The project's fixture MCP server (built with the sidecar): env TOOLREG_FIXTURE_MCP, else next to BIN.
FIXTURE_MCP = str((CLIENT_DIR / os.environ.get("TOOLREG_FIXTURE_MCP", str(Path(BIN).parent / "toolreg-fixture-mcp"))).resolve())


class Session:
    def __init__(self, client: ToolregClient, record: Path) -> None:
        self.client = client
        self.record = record

    def transcript(self) -> list[dict[str, Any]]:
        if not self.record.exists():
            return []
        lines = [json.loads(line) for line in self.record.read_text().splitlines() if line.strip()]
        return [r for r in lines if "dir" in r]  # the first line is a header, not a message


@pytest.fixture
def spawn_real(tmp_path: Path):
    """Spawns the real binary (debug methods on, a --record transcript); closes it afterwards."""
    made: list[ToolregClient] = []
    counter = [0]

    async def make(**kw: Any) -> Session:
        counter[0] += 1
        rec = tmp_path / f"session{counter[0]}.jsonl"
        env = {**os.environ, "TOOLREG_DEBUG_METHODS": "1"}
        client = await ToolregClient.spawn(BIN, args=["serve", "--record", str(rec)], env=env, **kw)
        made.append(client)
        return Session(client, rec)

    yield make
    # closing is done by the tests themselves (the event loop of the test is gone here)
    for c in made:
        if not c.is_exited:
            c.process.kill()


# The official MCP reference servers, installed by `npm ci --prefix tests/reference-servers`.
REFERENCE_SERVERS = (CLIENT_DIR / "../../tests/reference-servers/node_modules/@modelcontextprotocol").resolve()


def everything_server() -> dict[str, Any]:
    """A `catalog/setServers` entry for the reference server-everything (resources, prompts, completions)."""
    script = REFERENCE_SERVERS / "server-everything/dist/index.js"
    if not script.exists():
        raise RuntimeError(f"no {script}: run npm ci --prefix tests/reference-servers")
    return {"id": "everything", "name": "Everything", "enabled": True, "transport": {"type": "stdio", "command": "node", "args": [str(script), "stdio"]}}


def fixture_server(*args: str) -> dict[str, Any]:
    """A `catalog/setServers` entry for the fixture MCP server as server `fx`, started with `args`."""
    return {"id": "fx", "name": "fx", "enabled": True, "transport": {"type": "stdio", "command": FIXTURE_MCP, "args": list(args)}}


def entry(name: str, **extra: Any) -> dict[str, Any]:
    e = {
        "name": name,
        "namespace": "notes",
        "description": f"Tool {name}: does something with notes.\nMore detail on the second line.",
        "inputSchema": {"type": "object", "properties": {"title": {"type": "string", "description": "The title."}}, "required": ["title"]},
    }
    e.update(extra)
    return e
