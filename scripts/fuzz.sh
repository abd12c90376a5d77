#!/usr/bin/env bash
# Fuzzes every target in fuzz/ for a bounded time each (default 45 s), failing on the first
# crash (a panic, an overflow) or hang. CI runs it after scripts/test-all.sh (see .ci/run).
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#   FUZZ_SANITIZER=address scripts/fuzz.sh 600     (the longer campaign, with AddressSanitizer)
# The targets' code is safe Rust (the crate's `unsafe` is in process and file-descriptor calls:
# os.rs, catalog/child.rs, transport/stdio.rs, server/outgoing.rs, none of which a target reaches), so by default no sanitizer is built in: AddressSanitizer finds memory errors
# that safe Rust cannot make, and instrumenting every dependency with it doubled the build.
# Needs rustup's nightly toolchain; installs it and cargo-fuzz when missing. New corpus entries go to a temporary directory, so the committed
# seeds (fuzz/corpus, written by scripts/fuzz-seeds.py) stay small and unchanged; a crashing
# input is saved under fuzz/artifacts/<target>/ and the log names it.
set -euo pipefail
cd "$(dirname "$0")/.."

secs="${1:-45}"
shift || true
targets=("$@")
if (( ${#targets[@]} == 0 )); then
  targets=(codec classify predicate signature repair wire_name)
fi

if ! rustup toolchain list | grep -q '^nightly'; then
  rustup toolchain install nightly --profile minimal
fi
if ! command -v cargo-fuzz >/dev/null; then
  cargo install cargo-fuzz --locked
fi

# Debug assertions and overflow checks on (-a): an arithmetic overflow is a finding too.
san="${FUZZ_SANITIZER:-none}"
start=$SECONDS
cargo +nightly fuzz build -a -s "$san"
echo "fuzz: built every target (sanitizer: $san) in $((SECONDS - start))s"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for t in "${targets[@]}"; do
  mkdir -p "$tmp/$t"
  echo "== fuzz $t for ${secs}s"
  # -timeout: an input taking 20 s is a hang worth failing on, even on a loaded machine.
  if ! cargo +nightly fuzz run -a -s "$san" "$t" "$tmp/$t" "fuzz/corpus/$t" -- \
      -max_total_time="$secs" -timeout=20 -max_len=16384 -print_final_stats=1 >"$tmp/$t.log" 2>&1; then
    tail -n 60 "$tmp/$t.log" >&2
    echo "fuzz: $t FAILED; the input is in fuzz/artifacts/$t/" >&2
    exit 1
  fi
  grep -E '^stat::(number_of_executed_units|average_exec_per_sec)' "$tmp/$t.log" || true
done
echo "fuzz: ${#targets[@]} targets, ${secs}s each, no crash ($((SECONDS - start))s in all)"
