"""The official MCP Python SDK (`mcp` 2.3 on PyPI) lists 2,000 tools (`defer: never`) of `toolreg
mcp`, over Streamable HTTP and over stdio (issue 64). The SDK refuses a Server-Sent Event over
1 MiB ("Server-sent event exceeded the 1048576 byte limit"), which one unpaged `tools/list` of
2,000 tools is: the gateway pages it.

- Following `nextCursor`, every tool is listed exactly once, no page over 500 tools or 512 KiB,
  the last page has no `nextCursor`.
- A cursor answers the same page twice, and on another client session.
- A forged cursor is refused with -32602 and a reason.

    python3 tests/gateway/python_pages.py TOOLREG_BIN FIXTURE_BIN

Prints one line per check and exits non-zero at the first failure (tests/gateway_python.rs runs it).
"""

import asyncio
import base64
import json
import os
import sys
import tempfile

from mcp import ClientSession, MCPError, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

from python_sdk import check
from python_grants import start_http, write_config

TOOLS = 2000
MAX_ENTRIES, MAX_BYTES = 500, 512 * 1024


def page_bytes(tools):
    dumped = [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools]
    return len(json.dumps(dumped, separators=(",", ":"), ensure_ascii=False).encode())


async def all_pages(session):
    pages, cursor = [], None
    while True:
        params = None if cursor is None else types.PaginatedRequestParams(cursor=cursor)
        page = await session.list_tools(params=params)
        pages.append((cursor, page))
        cursor = page.next_cursor
        if cursor is None or len(pages) > 50:
            return pages


async def listing(session, face):
    """Checks one client session's listing; returns its pages."""
    pages = await all_pages(session)
    names = [t.name for _, p in pages for t in p.tools]
    generated = {f"mcp__fx__tool{i}" for i in range(TOOLS)}  # wire names drop the underscore
    check(len(names) == len(set(names)) and generated <= set(names),
          f"{face}: {len(names)} tools in {len(pages)} pages, each of the {TOOLS} exactly once")
    sizes = [(len(p.tools), page_bytes(p.tools)) for _, p in pages]
    check(len(pages) > 1 and all(n <= MAX_ENTRIES and b <= MAX_BYTES for n, b in sizes), f"{face}: every page within the bounds: {sizes}")
    check(pages[-1][1].next_cursor is None, f"{face}: the last page has no nextCursor")
    cursor, second = pages[1]
    again = await session.list_tools(params=types.PaginatedRequestParams(cursor=cursor))
    check([t.name for t in again.tools] == [t.name for t in second.tools] and again.next_cursor == second.next_cursor,
          f"{face}: the same cursor answers the same page again")
    return pages


async def forged(session, face, cursor):
    claims = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    claims["at"] += 1
    edited = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")
    for bad, what in [("not-a-cursor", "a garbage cursor"), (edited, "an edited cursor")]:
        try:
            await session.list_tools(params=types.PaginatedRequestParams(cursor=bad))
            check(False, f"{face}: {what} is refused")
        except MCPError as e:
            check(e.code == -32602 and (e.data or {}).get("reason"), f"{face}: {what} is refused: {e.code} {e.message} {e.data}")


async def over_http(toolreg, config, env):
    proc, url = start_http(toolreg, config, env)
    try:
        async def session_of(work):
            client = create_mcp_http_client(headers={"Authorization": "Bearer pages-test"})
            async with streamable_http_client(url, http_client=client) as streams:
                async with ClientSession(streams[0], streams[1]) as session:
                    await session.initialize()
                    return await work(session)

        pages = await session_of(lambda s: listing(s, "http"))
        cursor, second = pages[1]

        async def elsewhere(session):
            other = await session.list_tools(params=types.PaginatedRequestParams(cursor=cursor))
            check([t.name for t in other.tools] == [t.name for t in second.tools], "http: another session answers the cursor with the same page")
            await forged(session, "http", cursor)

        await session_of(elsewhere)
        return pages
    finally:
        proc.terminate()
        proc.wait(timeout=10)


async def over_stdio(toolreg, config, env, http_pages):
    server = StdioServerParameters(command=toolreg, args=["mcp", "--config", config], env=env)
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            pages = await listing(session, "stdio")
            same = [[t.name for t in p.tools] for _, p in pages] == [[t.name for t in p.tools] for _, p in http_pages]
            check(same and [c for c, _ in pages] == [c for c, _ in http_pages], "stdio: another process gives the same pages and cursors")
            await forged(session, "stdio", pages[1][0])


async def main(toolreg, fixture):
    work = tempfile.mkdtemp()
    config = write_config(work, "gateway.json", {
        "servers": [{"id": "fx", "name": "fx", "transport": {"type": "stdio", "command": fixture, "args": ["--tools", str(TOOLS), "--pad-bytes", "1100"]}}],
        "gateway": {"defer": "never", "cacheDir": os.path.join(work, "state")},
    })
    env = {**os.environ, "TOOLREG_LOG": "info", "TOOLREG_MCP_TOKEN": "pages-test"}
    http_pages = await over_http(toolreg, config, env)
    await over_stdio(toolreg, config, env, http_pages)
    print("python-pages: all checks passed", flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
