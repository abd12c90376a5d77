"""The official MCP Python SDK (`mcp` on PyPI) closing its HTTP sessions with `toolreg mcp`
(issue 64): the SDK sends `DELETE` when a session ends and logs "Session termination failed:
<status>" for anything but 200, 204 or 405. langchain-mcp-adapters opens a session per tool
call, so a gateway answering 202 (rmcp's answer) puts a warning in its users' logs every call.

Three sessions one after another, as a per-call client makes them (two on the whole gateway, one
on a profile's path), each listing and calling a tool, then closing: each `DELETE` answers 204
and no `mcp` logger records a warning.

    python3 tests/gateway/python_delete.py TOOLREG_BIN FIXTURE_BIN

Prints one line per check and exits non-zero at the first failure (tests/gateway_python.rs runs it).
"""

import asyncio
import logging
import os
import sys
import tempfile

from mcp import ClientSession
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

from python_grants import start_http, write_config
from python_sdk import check, text

ECHO = "mcp__fx__echo"


class Warnings(logging.Handler):
    """Keeps every record of the `mcp` loggers at WARNING or above."""

    def __init__(self):
        super().__init__(level=logging.WARNING)
        self.records = []

    def emit(self, record):
        self.records.append(record)


async def one_call(url, word):
    """A session that lists, calls echo once and closes; the statuses its DELETEs got."""
    deletes = []

    async def seen(response):
        if response.request.method == "DELETE":
            deletes.append(response.status_code)

    client = create_mcp_http_client(headers={"Authorization": "Bearer delete-test"})
    client.event_hooks["response"].append(seen)
    async with client:
        async with streamable_http_client(url, http_client=client) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                names = [t.name for t in (await session.list_tools()).tools]
                check(ECHO in names, f"{url}: {ECHO} is listed")
                ran = await session.call_tool(ECHO, {"word": word})
                check(not ran.is_error and word in text(ran), f"{url}: {ECHO} ran: {text(ran)}")
    return deletes


async def main(toolreg, fixture):
    warnings = Warnings()
    logging.getLogger("mcp").addHandler(warnings)
    logging.getLogger("mcp").setLevel(logging.DEBUG)
    work = tempfile.mkdtemp()
    config = write_config(work, "gateway.json", {
        "servers": [{"id": "fx", "name": "fx", "transport": {"type": "stdio", "command": fixture, "args": ["--tools", "3"]}}],
        "gateway": {"defer": "never", "cacheDir": os.path.join(work, "state"),
                    "profiles": {"small": {"servers": ["fx"]}}},
    })
    env = {**os.environ, "TOOLREG_LOG": "info", "TOOLREG_MCP_TOKEN": "delete-test"}
    proc, url = start_http(toolreg, config, env)
    try:
        closed = [(where, await one_call(where, word)) for where, word in [(url, "one"), (url, "two"), (url + "/small", "three")]]
        failed = [r.getMessage() for r in warnings.records if "Session termination failed" in r.getMessage()]
        check(not failed, f"no 'Session termination failed' warning: {failed}")
        for where, deletes in closed:
            check(deletes == [204], f"{where}: closing the session sent one DELETE, answered 204: {deletes}")
        check(not warnings.records, f"no warning from the mcp loggers at all: {[r.getMessage() for r in warnings.records]}")
    finally:
        proc.terminate()
        proc.wait()
    print("python-delete: all checks passed", flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
