#!/usr/bin/env bash
# Installs the clients' dependencies, runs both generators' drift checks, then both test suites
# against the real binary, then the MCP Apps example host (examples/apps-host) in headless Chromium. Needs node/npm, python3 (with venv/pip) and a built sidecar at
# $TOOLREG_BIN (default: ../target/release/toolreg, i.e. `cargo build --release --workspace` at the
# repo root, or the `cargo test --release --workspace` of scripts/test-all.sh) with the fixture MCP
# server at $TOOLREG_FIXTURE_MCP (default: toolreg-fixture-mcp next to it, built by the same command). No test uses a mock sidecar.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export TOOLREG_BIN="$(cd "$here" && realpath -m "${TOOLREG_BIN:-$here/../target/release/toolreg}")"
if [[ ! -x "$TOOLREG_BIN" ]]; then
  echo "clients/test.sh: no sidecar binary at $TOOLREG_BIN (build it with 'cargo build --release --workspace' or set TOOLREG_BIN)" >&2
  exit 1
fi
export TOOLREG_FIXTURE_MCP="$(realpath -m "${TOOLREG_FIXTURE_MCP:-$(dirname "$TOOLREG_BIN")/toolreg-fixture-mcp}")"
if [[ ! -x "$TOOLREG_FIXTURE_MCP" ]]; then
  echo "clients/test.sh: no fixture MCP server at $TOOLREG_FIXTURE_MCP (built by 'cargo build --release --workspace'; or set TOOLREG_FIXTURE_MCP)" >&2
  exit 1
fi
start=$SECONDS
PYTHON="${PYTHON:-python3}"
export PYTHON
failed=()
step() { echo; echo "== [$((SECONDS - start))s] $*"; }

step "versions: Cargo.toml's version in both packages (scripts/version.py --check)"
"$PYTHON" "$here/../scripts/version.py" --check || failed+=("scripts/version.py --check")

step "typescript: npm ci"
(cd "$here/typescript" && npm ci --no-audit --no-fund)

step "typescript: drift check of src/generated/protocol.ts"
(cd "$here/typescript" && npm run --silent check-gen) || failed+=("typescript check-gen")

step "typescript: tests"
(cd "$here/typescript" && npm test) || failed+=("typescript tests")

step "python: venv + pip install -e .[dev]"
venv="$here/python/.venv"
if [[ ! -x "$venv/bin/python" ]]; then
  "$PYTHON" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e "$here/python[dev]"

step "python: drift check of toolreg_client/_protocol.py"
(cd "$here/python" && "$venv/bin/python" gen.py --check) || failed+=("python gen.py --check")

step "python: mypy --strict toolreg_client"
(cd "$here/python" && "$venv/bin/python" -m mypy --strict toolreg_client) || failed+=("python mypy")

step "python: tests"
set +e
(cd "$here/python" && PYTHON="$venv/bin/python" "$venv/bin/python" -m pytest -q)
rc=$?
set -e
# Any non-zero code fails, including 5 (no tests collected).
if [[ $rc -ne 0 ]]; then failed+=("python tests (pytest exit $rc)"); fi

step "examples (smoke: they must run to the end)"
(cd "$here/typescript" && node dist/examples/quickstart.js "$TOOLREG_BIN" >/dev/null) || failed+=("typescript examples/quickstart")
(cd "$here/typescript" && node dist/examples/deferred-flow.js "$TOOLREG_BIN" >/dev/null) || failed+=("typescript examples/deferred-flow")
(cd "$here/typescript" && node dist/examples/native-flow.js "$TOOLREG_BIN" >/dev/null) || failed+=("typescript examples/native-flow")
(cd "$here/python" && "$venv/bin/python" examples/quickstart.py "$TOOLREG_BIN" >/dev/null) || failed+=("python examples/quickstart.py")
(cd "$here/python" && "$venv/bin/python" examples/deferred_flow.py "$TOOLREG_BIN" >/dev/null) || failed+=("python examples/deferred_flow.py")
(cd "$here/python" && "$venv/bin/python" examples/native_flow.py "$TOOLREG_BIN" >/dev/null) || failed+=("python examples/native_flow.py")

# After the TypeScript client is built (npm ci above runs its prepare): the example links it.
step "examples/apps-host: npm ci, then the MCP Apps view in headless Chromium (/usr/bin/chromium or \$CHROMIUM)"
(cd "$here/../examples/apps-host" && npm ci --no-audit --no-fund && npm test) || failed+=("examples/apps-host browser test")

step "transcript recorders (smoke: they must record a whole session; the committed copies are replayed by cargo test --test transcripts)"
tmp="$(mktemp -d)"
(cd "$here/typescript" && node scripts/record-transcript.mjs "$tmp/ts.jsonl" >/dev/null) || failed+=("typescript scripts/record-transcript.mjs")
(cd "$here/python" && "$venv/bin/python" record_transcript.py "$tmp/py.jsonl" >/dev/null) || failed+=("python record_transcript.py")
rm -rf "$tmp"

echo
echo "clients/test.sh: $((SECONDS - start))s"
if (( ${#failed[@]} )); then
  echo "clients/test.sh: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "clients/test.sh: all client checks and tests passed"
