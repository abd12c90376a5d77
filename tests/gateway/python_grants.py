"""The official MCP Python SDK (`mcp` on PyPI) as clients of `toolreg mcp` (issue 54): remembered
approvals and the listing Claude Code must not defer again.

- Over Streamable HTTP (`--http`, two MCP sessions of one gateway): the approval form's
  `decision` offers `approveSession` and `approveAlways` (a titled single-select); approving for
  the session lets the next call of that session run without a form, and not another session's;
  `approveAlways` is kept in the state directory, `toolreg approvals` shows it, `--revoke` ends
  it and the running gateway asks again.
- `tools/list`: every tool carries `_meta["anthropic/alwaysLoad"]: true`; none with
  `gateway.alwaysLoad: false` (over stdio).

    python3 tests/gateway/python_grants.py TOOLREG_BIN FIXTURE_BIN

Prints one line per check and exits non-zero at the first failure (tests/gateway_python.rs runs it).
"""

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import threading

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

from python_sdk import check, text

ALWAYS_LOAD = "anthropic/alwaysLoad"
ECHO = "mcp__fx__echo"


def write_config(work, name, config):
    path = os.path.join(work, name)
    with open(path, "w") as f:
        json.dump(config, f)
    return path


def choices(form):
    decision = form.requested_schema["properties"]["decision"]
    return [c["const"] for c in decision.get("oneOf", [])], decision


class Asker:
    """An elicitation callback that answers each form with the next decision, and keeps them."""

    def __init__(self):
        self.forms, self.answers = [], []

    async def __call__(self, context, params):
        self.forms.append(params)
        return types.ElicitResult(action="accept", content={"decision": self.answers.pop(0)})


def start_http(toolreg, config, env):
    proc = subprocess.Popen([toolreg, "mcp", "--config", config, "--http", "127.0.0.1:0"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    addr = None
    for line in proc.stderr:
        if "listening on http://" in line:
            addr = line.split("listening on http://")[1].strip()
            break
    check(addr is not None, f"toolreg mcp --http listens: {addr}")
    # Keep reading stderr so the gateway never blocks on a full pipe.
    threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()
    url = "http://" + addr
    if not url.endswith("/mcp"):
        url += "/mcp"
    return proc, url


async def in_session(url, asker, work):
    client = create_mcp_http_client(headers={"Authorization": "Bearer grants-test"})
    async with streamable_http_client(url, http_client=client) as streams:
        read, write = streams[0], streams[1]
        async with ClientSession(read, write, elicitation_callback=asker) as session:
            await session.initialize()
            return await work(session)


def approvals(toolreg, config, env, *args):
    return subprocess.run([toolreg, "approvals", "--config", config, *args], env=env, capture_output=True, text=True)


async def main(toolreg, fixture):
    work = tempfile.mkdtemp()
    calls = os.path.join(work, "calls.txt")
    config = write_config(work, "gateway.json", {
        "servers": [{"id": "fx", "name": "fx", "approvalTools": ["echo"],
                     "transport": {"type": "stdio", "command": fixture, "args": ["--tools", "3", "--calls-file", calls]}}],
        "gateway": {"defer": "never", "cacheDir": os.path.join(work, "state")},
    })
    env = {**os.environ, "TOOLREG_LOG": "info", "TOOLREG_MCP_TOKEN": "grants-test"}
    proc, url = start_http(toolreg, config, env)
    try:
        first = Asker()

        async def session_one(session):
            listed = await session.list_tools()
            loads = [(t.name, (t.meta or {}).get(ALWAYS_LOAD)) for t in listed.tools]
            check(loads and all(v is True for _, v in loads), f"tools/list: every tool carries {ALWAYS_LOAD}: {loads}")
            first.answers = ["approveSession"]
            ran = await session.call_tool(ECHO, {"word": "one"})
            check(len(first.forms) == 1 and not ran.is_error, f"the first call asked and ran: {text(ran)}")
            offered, decision = choices(first.forms[0])
            check({"approve", "approveSession", "approveAlways", "deny"} <= set(offered),
                  f"the form's decision offers approveSession and approveAlways: {offered}")
            check(all("title" in c for c in decision["oneOf"]), "each choice has a title a person reads")
            again = await session.call_tool(ECHO, {"word": "two"})
            check(len(first.forms) == 1 and not again.is_error, "approveSession: the next call ran without a form")

        await in_session(url, first, session_one)

        second = Asker()

        async def session_two(session):
            second.answers = ["approveAlways"]
            ran = await session.call_tool(ECHO, {"word": "three"})
            check(len(second.forms) == 1 and not ran.is_error, "another client session is asked (the session grant is not its)")
            again = await session.call_tool(ECHO, {"word": "four"})
            check(len(second.forms) == 1 and not again.is_error, "approveAlways: the next call ran without a form")

        await in_session(url, second, session_two)

        listed = approvals(toolreg, config, env)
        check(listed.returncode == 0 and ECHO in listed.stdout and "always" in listed.stdout, f"toolreg approvals shows it: {listed.stdout!r} {listed.stderr!r}")
        revoked = approvals(toolreg, config, env, "--revoke", ECHO)
        check(revoked.returncode == 0 and "revoked 1" in revoked.stdout, f"toolreg approvals --revoke revokes it: {revoked.stdout!r} {revoked.stderr!r}")
        after = approvals(toolreg, config, env)
        check(ECHO not in after.stdout, f"toolreg approvals no longer shows it: {after.stdout!r}")

        third = Asker()

        async def session_three(session):
            third.answers = ["deny"]
            denied = await session.call_tool(ECHO, {"word": "five"})
            check(len(third.forms) == 1 and denied.is_error, "revoked: the running gateway asks again")

        await in_session(url, third, session_three)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    with open(calls) as f:
        check(f.read().split() == ["echo"] * 4, "upstream saw exactly the four approved calls")

    await without_always_load(toolreg, fixture, work)
    print("python-grants: all checks passed", flush=True)


async def without_always_load(toolreg, fixture, work):
    config = write_config(work, "off.json", {
        "servers": [{"id": "fx", "name": "fx", "transport": {"type": "stdio", "command": fixture, "args": ["--tools", "3"]}}],
        "gateway": {"defer": "never", "alwaysLoad": False, "cacheDir": os.path.join(work, "off-state")},
    })
    server = StdioServerParameters(command=toolreg, args=["mcp", "--config", config], env={**os.environ, "TOOLREG_LOG": "warn"})
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = (await session.list_tools()).tools
            check(len(tools) > 3 and not any(ALWAYS_LOAD in (t.meta or {}) for t in tools),
                  f"gateway.alwaysLoad false: no tool carries {ALWAYS_LOAD}")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
