#!/usr/bin/env bash
# Linux arm64 and macOS: code for aarch64-unknown-linux-gnu, x86_64-apple-darwin and
# aarch64-apple-darwin compiles (cargo check, std built from source by the nightly of
# scripts/windows/toolchain.sh), and a Linux arm64 release binary is built with Debian's cross gcc
# and its `toolreg plan` runs under qemu-aarch64. docs/install.md says what is tested where.
#   scripts/cross.sh [check|arm64|all]     (default: all)
# TOOLREG_CROSS_ARM64=0 leaves the arm64 binary out of `all` (the checks stay): CI's first cut
# when it runs long (issue 62). The binary lands in
# $CARGO_TARGET_DIR/aarch64-unknown-linux-gnu/release/toolreg, where scripts/package.sh packs it.
# Installs what it lacks: Debian's gcc-aarch64-linux-gnu and qemu-user-static (apt), zig and
# cargo-zigbuild (PyPI, pinned by hash in scripts/cross-requirements.txt) into a venv in the cache.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
# As scripts/windows.sh: no debug info in cross builds, and so the same host build scripts and
# proc macros as the Windows build (one compile of them for both).
export CARGO_PROFILE_RELEASE_DEBUG=0
# shellcheck source=scripts/windows/toolchain.sh
. scripts/windows/toolchain.sh
nightly_std_source

took() { echo "cross: $1 took $(( SECONDS - $2 ))s"; }
# clean CMD...: runs a cargo command; a warning fails it, as in scripts/windows.sh (code behind
# cfg(target_os = "linux") that another target leaves unused is a real finding).
clean() {
  local log
  log="$(mktemp)"
  "$@" 2>&1 | tee "$log"
  if grep -E '^warning' "$log"; then
    rm -f "$log"
    echo "cross.sh: warnings (above) in: $*" >&2
    exit 1
  fi
  rm -f "$log"
}
build_std=(-Zbuild-std=std,panic_abort)
arm64=aarch64-unknown-linux-gnu
arm64_env() {
  need_deb aarch64-linux-gnu-gcc gcc-aarch64-linux-gnu
  # ring's and QuickJS's C, and the link, with Debian's cross gcc.
  export CC_aarch64_unknown_linux_gnu=aarch64-linux-gnu-gcc
  export AR_aarch64_unknown_linux_gnu=aarch64-linux-gnu-ar
  export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
}

# zig (the ziglang wheel) compiles the macOS targets' C; cargo-zigbuild hands zig the arguments it
# understands (cc's --target=arm64-apple-macosx... is not zig's triple syntax) and links with it.
zig_venv() {
  local venv="$TOOLCHAIN_CACHE/zig-venv" want
  want="$(sha256sum scripts/cross-requirements.txt | cut -c1-16)"
  if [ "$(cat "$venv/.requirements" 2>/dev/null)" != "$want" ]; then
    echo "== cross: zig and cargo-zigbuild into $venv"
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check --only-binary=:all: --require-hashes \
      -r scripts/cross-requirements.txt
    echo "$want" >"$venv/.requirements"
  fi
  # cargo-zigbuild runs `python3 -m ziglang`: the venv's python first on PATH.
  export PATH="$venv/bin:$PATH"
}

# check [macos]: cargo check for arm64 and both macOS targets, or (`macos`) the macOS ones only,
# when the arm64 binary is built anyway (a build checks the code, and its dependencies would
# otherwise be compiled twice, once only for their metadata).
check() {
  local t=$SECONDS
  if [ "${1:-}" != macos ]; then
    arm64_env
    echo "== cross: cargo +nightly check --release --target $arm64"
    clean cargo +nightly check "${build_std[@]}" --target "$arm64" --release --locked --package toolreg
    took "check $arm64" $t
  fi
  zig_venv
  for triple in x86_64-apple-darwin aarch64-apple-darwin; do
    t=$SECONDS
    echo "== cross: cargo +nightly zigbuild check --release --target $triple"
    RUSTUP_TOOLCHAIN=nightly clean cargo-zigbuild check "${build_std[@]}" --target "$triple" --release --locked --package toolreg
    took "check $triple" $t
  done
}

arm64_binary() {
  local t=$SECONDS
  arm64_env
  need_deb qemu-aarch64-static qemu-user-static
  echo "== cross: cargo +nightly build --release --target $arm64 --bin toolreg"
  clean cargo +nightly build "${build_std[@]}" --target "$arm64" --release --locked --bin toolreg
  local bin="$CARGO_TARGET_DIR/$arm64/release/toolreg"
  # An ELF of machine 183 (EM_AARCH64), not a host binary left by another build.
  python3 -c 'import sys; h=open(sys.argv[1],"rb").read(20); sys.exit(h[:4]!=b"\x7fELF" or int.from_bytes(h[18:20],"little")!=183)' "$bin" \
    || { echo "cross.sh: $bin is not an arm64 ELF executable" >&2; exit 1; }
  took "build $arm64" $t
  t=$SECONDS
  local out
  out="$(qemu-aarch64-static -L /usr/aarch64-linux-gnu "$bin" plan 2>&1)" || { echo "$out" >&2; echo "cross.sh: toolreg plan failed under qemu-aarch64" >&2; exit 1; }
  grep -q tool_search <<<"$out" || { echo "$out" >&2; echo "cross.sh: toolreg plan under qemu-aarch64 printed no tool_search" >&2; exit 1; }
  echo "  qemu-aarch64: toolreg plan: ok"
  took "toolreg plan under qemu-aarch64" $t
}

case "${1:-all}" in
  check) check ;;
  arm64) arm64_binary ;;
  all)
    if [ "${TOOLREG_CROSS_ARM64:-1}" = 0 ]; then
      check
      # A binary of an earlier run would be packed by scripts/package.sh as if built from this tree.
      rm -f "$CARGO_TARGET_DIR/$arm64/release/toolreg"
      echo "== cross: the arm64 binary left out (TOOLREG_CROSS_ARM64=0)"
    else
      check macos
      arm64_binary
    fi ;;
  *) echo "usage: scripts/cross.sh [check|arm64|all]" >&2; exit 2 ;;
esac
