#!/usr/bin/env bash
# Every test of the project: the Rust suite (unit, real-binary, transcripts, schema drift).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --locked
