#!/usr/bin/env python3
"""The host that the MCP conformance suite drives (client mode): `adapter.py <server-url>`.

The suite starts a scenario's MCP server and runs this command with its URL. We play a desktop
host: spawn `toolreg serve` through the Python client, point its catalog at the URL, sync the
server's tools into the registry and call each of them, answering the sidecar's reverse requests
the way a headless host would:
- `approval/request`: allow (the suite's tools are the test's own).
- `host/openUrl`: fetch the URL and follow its redirects, as a browser whose user clicks "allow"
  would; the authorization server's last redirect lands on the sidecar's loopback listener.
- `host/secrets/get|set|delete`: an in-memory keychain.
- `host/elicit`: accept with no content of our own, so the schema's defaults apply (SEP-1034).
- `host/sample`: a fixed assistant text.
- `host/roots`: one root, `file:///conformance`.

Which calls: the ones the scenario names in MCP_CONFORMANCE_CONTEXT.toolCalls (`[{name,
arguments}]`) when it names some; for json-schema-2020-12-preservation, one call of
json_schema_echo with the focal tool's inputSchema as toolreg holds it (so the suite measures our
preservation, not the server's); none for LIST_ONLY_SCENARIOS; otherwise every tool once, with
ARGUMENTS or {}.

Env: TOOLREG_BIN (default: target/release/toolreg of this repository), MCP_CONFORMANCE_SCENARIO,
MCP_CONFORMANCE_CONTEXT (JSON; pre-registered OAuth client credentials for some auth scenarios,
the tool calls to make for others).
Exit code 0 when every step ran; the suite judges the protocol, not our exit code alone.
"""
from __future__ import annotations

import asyncio
import json
import os
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "clients" / "python"))

from toolreg_client import ToolregClient, ToolregRpcError  # noqa: E402

SERVER_ID = "conformance"
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
READY_WITHIN_S = 25.0
# Step-up authorizations a call may wait for before the host gives up on it.
MAX_STEP_UPS = 2

# Pause between the server turning ready and the first tool call (see run()).
SETTLE_S = 0.5

# Arguments for the tools the scenarios expose; any other tool is called with {}.
ARGUMENTS: dict[str, dict[str, Any]] = {"add_numbers": {"a": 5, "b": 3}, "valid_tool": {"region": "us-west1"}}

# Scenarios whose server lists tools but answers no tools/call (json-schema-ref-no-deref judges
# only that listing never fetches a remote $ref): nothing is called.
LIST_ONLY_SCENARIOS = {"json-schema-ref-no-deref"}

# json-schema-2020-12-preservation: call ECHO_TOOL with {"schema": FOCAL_TOOL's inputSchema}.
SCHEMA_ECHO_SCENARIO = "json-schema-2020-12-preservation"
FOCAL_TOOL = "json_schema_2020_12_tool"
ECHO_TOOL = "json_schema_echo"


# The skills scenarios (SEP-2640): the host lists the server's skills; it loads one only when
# asked to (the model or the user picks it), which the no-prefetch scenario never does.
SKILLS_PREFIX = "sep-2640-client-"
SKILLS_LIST_ONLY = {"sep-2640-client-no-prefetch"}


async def use_skills(client: ToolregClient, scenario: str) -> int:
    """Lists the skills, then (unless list-only) loads each: a skill whose files fail
    verification must be refused, so a refusal is this host doing its job."""
    skills = (await client.catalog_list_skills(SERVER_ID))["skills"]
    log("skills", json.dumps(skills)[:500])
    if scenario in SKILLS_LIST_ONLY:
        return 0
    for skill in skills:
        try:
            loaded = await client.catalog_load_skill(SERVER_ID, skill["uri"])
            log("loaded", skill["uri"], len(loaded["files"]), "files")
        except ToolregRpcError as e:
            log("refused", skill["uri"], e)
    return 0


def log(*parts: Any) -> None:
    print("adapter:", *parts, file=sys.stderr, flush=True)


def open_url(url: str) -> None:
    """A headless browser: GET, following redirects to the end (the loopback callback)."""
    with urllib.request.urlopen(url, timeout=15) as r:
        r.read()


class Host:
    def __init__(self, scenario: str) -> None:
        self.scenario = scenario
        self.secrets: dict[str, str] = {}

    async def on_request(self, method: str, params: Any) -> Any:
        p = params or {}
        log("reverse request", method)
        if method == "host/openUrl":
            await asyncio.to_thread(open_url, p["url"])
            return {}
        if method == "host/secrets/get":
            return {"value": self.secrets.get(p["key"])}
        if method == "host/secrets/set":
            self.secrets[p["key"]] = p["value"]
            return {}
        if method == "host/secrets/delete":
            self.secrets.pop(p["key"], None)
            return {}
        if method == "host/elicit":
            if p.get("mode") == "url":
                await asyncio.to_thread(open_url, p["url"])
            return {"action": "accept", "content": {}}
        if method == "host/sample":
            return {"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "conformance-host", "stopReason": "endTurn"}
        if method == "host/roots":
            return {"roots": [{"uri": "file:///conformance", "name": "conformance"}]}
        raise LookupError(f"the adapter does not answer {method}")


def server_config(url: str, context: dict[str, Any], scenario: str = "") -> dict[str, Any]:
    server: dict[str, Any] = {
        "id": SERVER_ID,
        "name": SERVER_ID,
        "enabled": True,
        "trust": "auto",
        "transport": {"type": "http", "url": url},
    }
    # The client ID metadata document a host would publish for itself; the suite's
    # authorization servers accept this URL (used only where they advertise CIMD support).
    oauth: dict[str, Any] = {"clientMetadataUrl": CLIENT_METADATA_URL}
    if context.get("client_id"):
        oauth["clientId"] = context["client_id"]
        if context.get("client_secret"):
            oauth["clientSecret"] = context["client_secret"]
    oauth.update(machine_grant(scenario, context))
    server["oauth"] = oauth
    return server


def machine_grant(scenario: str, context: dict[str, Any]) -> dict[str, Any]:
    """The grant without a user that the scenario's context equips this host for, as a host
    administrator would configure it (the authorization extensions): a workload identity token
    (`valid_jwt`), an enterprise ID token and its identity provider (`idp_id_token`), or, in the
    client credentials scenarios, the client's own secret or private key."""
    if context.get("valid_jwt"):
        return {"grant": "jwtBearer", "assertion": context["valid_jwt"]}
    if context.get("idp_id_token"):
        idp = {"tokenEndpoint": context["idp_token_endpoint"], "idToken": context["idp_id_token"]}
        if context.get("idp_client_id"):
            idp["clientId"] = context["idp_client_id"]
        return {"grant": "enterpriseManaged", "idp": idp}
    if scenario.startswith("auth/client-credentials"):
        grant: dict[str, Any] = {"grant": "clientCredentials"}
        if context.get("private_key_pem"):
            grant["privateKey"] = context["private_key_pem"]
            if context.get("signing_algorithm"):
                grant["signingAlgorithm"] = context["signing_algorithm"]
        return grant
    return {}


async def server_status(client: ToolregClient) -> dict[str, Any]:
    return next(dict(s) for s in (await client.catalog_status())["servers"] if s["id"] == SERVER_ID)


def gave_up(status: dict[str, Any]) -> bool:
    """needsAuth after the sidecar's retry limit: no flow is running and none will start until the
    server is restarted, so waiting out READY_WITHIN_S would only cost time (auth/scope-retry-limit
    took 28 s instead of 3), nor after a flow that failed (the auth/iss-* scenarios whose
    authorization response the sidecar rightly refuses, 28 s of the suite's 30). The status says
    so only in its text."""
    error = status.get("error") or ""
    return status["state"] == "needsAuth" and ("restart it to try again" in error or "authorization failed" in error)


async def wait_status(client: ToolregClient, status: dict[str, Any] | None = None) -> dict[str, Any]:
    """Polls while the server is connecting or waiting on the user's authorization (which this
    host grants through host/openUrl)."""
    status = status or await server_status(client)
    end = time.monotonic() + READY_WITHIN_S
    while status["state"] in ("connecting", "needsAuth") and not gave_up(status) and time.monotonic() < end:
        await asyncio.sleep(0.1)
        status = await server_status(client)
    return status


async def wait_ready(client: ToolregClient) -> dict[str, Any]:
    """One refresh (it waits for the connection), then polls."""
    return await wait_status(client, dict(await client.catalog_refresh(SERVER_ID)))


def same_tool(registered: str, upstream: str) -> bool:
    """Whether a registry name (`ns__wire_name`) is the upstream tool `upstream`: the wire name
    keeps the letters and digits, not always the separators or the case."""
    def key(n: str) -> str:
        return "".join(c for c in n if c.isalnum()).lower()
    return key(registered.split("__")[-1]) == key(upstream)


def registered_name(registered: list[str], upstream: str) -> str:
    name = next((n for n in registered if same_tool(n, upstream)), None)
    if name is None:
        raise LookupError(f"no registered tool for {upstream} among {registered}")
    return name


async def planned_calls(client: ToolregClient, scenario: str, context: dict[str, Any], registered: list[str]) -> list[tuple[str, dict[str, Any]]]:
    """The (registry name, arguments) pairs to call, in order (see the module doc)."""
    if scenario in LIST_ONLY_SCENARIOS:
        return []
    if context.get("toolCalls"):
        return [(registered_name(registered, c["name"]), c.get("arguments") or {}) for c in context["toolCalls"]]
    if scenario == SCHEMA_ECHO_SCENARIO:
        tools = (await client.catalog_list_tools(SERVER_ID))["tools"]
        schema = next(t["inputSchema"] for t in tools if t["name"] == FOCAL_TOOL)
        return [(registered_name(registered, ECHO_TOOL), {"schema": schema})]
    calls = []
    for name in registered:
        upstream = next((t for t in ARGUMENTS if same_tool(name, t)), None)
        calls.append((name, ARGUMENTS.get(upstream, {}) if upstream else {}))
    return calls


async def run(url: str) -> int:
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    binary = os.environ.get("TOOLREG_BIN") or str(ROOT / "target" / "release" / "toolreg")
    host = Host(scenario)
    log("scenario", scenario or "(none)", "url", url)
    client = await ToolregClient.spawn(
        binary,
        capabilities={"openUrl": True, "secrets": True, "elicitation": True, "sampling": True, "roots": True},  # type: ignore[arg-type]  # keys newer than the generated types
        on_approval_request=lambda req: {"decision": "allow"},
        on_request=host.on_request,
        on_stderr=lambda line: print(line, file=sys.stderr, flush=True),
    )
    failed = 0
    try:
        await client.catalog_set_servers([server_config(url, context, scenario)])  # type: ignore[list-item]
        status = await wait_ready(client)
        log("status", json.dumps(status))
        if status["state"] != "ready":
            return 1
        if scenario.startswith(SKILLS_PREFIX):
            return await use_skills(client, scenario)
        sync = await client.registry_sync_mcp()
        # A host's first tool call comes long after the connection (a person types). Calling at
        # once races rmcp's standalone GET stream, which it opens in the background after
        # `initialized`: when that GET lands after the call, sse-retry takes it for the call's
        # reconnection and cannot measure the retry timing (a warning, so a failure).
        await asyncio.sleep(SETTLE_S)
        for name, args in await planned_calls(client, scenario, context, sync["registered"]):
            try:
                r = await client.tool_invoke(name, args, call_id=f"call-{name}")
                # A server that asks for more access (step-up) fails the call at once and
                # shows needsAuth while the user authorizes; a host retries once it is ready.
                for _ in range(MAX_STEP_UPS):
                    if not r.get("isError") or (await server_status(client))["state"] != "needsAuth":
                        break
                    status = await wait_status(client)
                    log("status after step-up", json.dumps(status))
                    if status["state"] != "ready":
                        break
                    r = await client.tool_invoke(name, args, call_id=f"call-{name}-again")
                log("called", name, json.dumps(r)[:500])
                failed += bool(r.get("isError"))
            except ToolregRpcError as e:
                log("call failed", name, e)
                failed += 1
    finally:
        await client.close()
    return 1 if failed else 0


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: adapter.py <mcp-server-url>", file=sys.stderr)
        return 2
    return asyncio.run(run(sys.argv[1]))


if __name__ == "__main__":
    sys.exit(main())
