#!/usr/bin/env bash
# Windows x64 (x86_64-pc-windows-gnu): the whole workspace built with mingw-w64 and the nightly
# toolchain's std built from source, then the Windows tests run under Wine, through the Windows
# binaries and the Windows fixture server. .ci/run runs it after the test command; docs/install.md
# says what is tested where.
#   scripts/windows.sh [toolchain|build|wine|test|all]     (default: all)
# Installs what it lacks: Debian's mingw-w64 and Wine (apt), the std source from
# ../shared/toolchains, and, for the tests, a Wine prefix (scripts/windows/wine-env.sh).
# The binaries land in $CARGO_TARGET_DIR/x86_64-pc-windows-gnu/release/ (target/ when unset).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
triple=x86_64-pc-windows-gnu
# Cross builds carry no debug info: the Windows binary is shipped stripped, and mingw's linker
# spends minutes on DWARF nobody reads (the Linux release profile keeps its line tables).
export CARGO_PROFILE_RELEASE_DEBUG=0
# std built from source for the target; `test` too, which `cargo test` adds as a dependency of
# every crate: named in the build as well, the tests reuse what the build compiled rather than
# compiling the whole workspace a second time (6-7 minutes on two cores).
build_std=(-Zbuild-std=std,panic_abort,test)
# shellcheck source=scripts/windows/toolchain.sh
. scripts/windows/toolchain.sh

# The std source must be the nightly's own: -Zbuild-std compiles what it finds there.
nightly_std_source

build() {
  need_deb x86_64-w64-mingw32-gcc gcc-mingw-w64-x86-64
  local log="$CARGO_TARGET_DIR/$triple-build.log"
  mkdir -p "$CARGO_TARGET_DIR"
  echo "== windows: cargo +nightly build --release --workspace --target $triple"
  cargo +nightly build "${build_std[@]}" --target "$triple" --release --workspace --locked 2>&1 | tee "$log"
  # Warnings fail the build: code behind cfg(unix) that Windows leaves unused is a real finding.
  if grep -E '^warning' "$log" | grep -v '^warning: .*generated 0 warnings'; then
    echo "windows.sh: the Windows build has warnings (above); it must build clean" >&2
    exit 1
  fi
  ls -la "$CARGO_TARGET_DIR/$triple/release/"{toolreg.exe,toolreg-fixture-mcp.exe}
}

wine_env() {
  # shellcheck source=scripts/windows/wine-env.sh
  . scripts/windows/wine-env.sh
}

run_tests() {
  # The fixture server is another package's bin, which `cargo test --test=...` does not build:
  # the workspace build (a no-op right after `build`) keeps it current.
  build
  wine_env
  # The embedding model the ONNX Runtime test embeds with (idempotent; test-all.sh runs it too).
  scripts/embedding-model.sh
  echo "== windows: the Windows tests under Wine"
  # A failed test may leave servers running in the prefix: the Wine server ends them all, pass or fail.
  trap 'wineserver -k 2>/dev/null || true' EXIT
  # Each test binary runs under Wine (scripts/windows/wine-run); the binaries it spawns are the
  # Windows ones beside it. The list is docs/install.md's "Tested under Wine".
  CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER="$root/scripts/windows/wine-run" \
    cargo +nightly test "${build_std[@]}" --target "$triple" --release --workspace --locked \
    "${WINDOWS_TESTS[@]/#/--test=}"
  # Of the several-processes tests (issue 63), the ones that hold on Windows too: grants shared
  # by a sidecar and two gateways, a 0.5 state directory migrated, a writer killed mid-write.
  CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER="$root/scripts/windows/wine-run" \
    cargo +nightly test "${build_std[@]}" --target "$triple" --release --workspace --locked \
    --test=processes -- "${WINDOWS_PROCESSES[@]}"
}

# The Rust test files run under Wine; the rest need Linux or a tool with no Windows build here
# (docs/install.md lists which, and why).
WINDOWS_TESTS=(windows transcripts)
WINDOWS_PROCESSES=(grants:: migration::a_state_directory crash::)

case "${1:-all}" in
  toolchain) ;;
  build) build ;;
  wine) wine_env ;;
  test) run_tests ;;
  all) run_tests ;;
  *) echo "usage: scripts/windows.sh [toolchain|build|wine|test|all]" >&2; exit 2 ;;
esac
