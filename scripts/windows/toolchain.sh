# Sourced by scripts/windows.sh and scripts/cross.sh: the nightly toolchain whose std is built from
# source for targets with no prebuilt std here, and Debian packages installed on demand.

# The one nightly the std source in ../shared/toolchains fits (its README).
NIGHTLY_WANT="rustc 1.97.0-nightly (e50aa6fba 2026-05-19)"
RUST_SRC_DEB="${TOOLREG_SHARED:-../shared}/toolchains/rust-src_1.97.1+dfsg1-1_all.deb"
RUST_SRC_SHA=d0637f8f464234ffb12baa55fc0e851f5f9dcfd0199c1a0922e4488a4f591992
TOOLCHAIN_CACHE="${TOOLREG_TOOLCHAIN_CACHE:-$HOME/.cache/toolreg}"

apt_updated=
# need_deb COMMAND PACKAGE...: installs Debian's PACKAGEs when COMMAND is not on PATH.
need_deb() {
  local cmd="$1"; shift
  command -v "$cmd" >/dev/null && return 0
  command -v apt-get >/dev/null || { echo "$cmd is missing: install Debian's $* (no apt-get here)" >&2; exit 1; }
  [ -n "$apt_updated" ] || { apt-get update -qq; apt_updated=1; }
  echo "== installing $* (for $cmd)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

# Checks the nightly's version, unpacks the std source once into the cache (hash-checked) and
# makes the toolchain's lib/rustlib/src/rust point at it, anew on every run: whatever was there
# (a link from another run, rustup's own rust-src) is replaced, never trusted.
nightly_std_source() {
  rustup toolchain list | grep -q '^nightly' || { echo "no nightly toolchain (rustup toolchain install nightly)" >&2; exit 1; }
  local have
  have="$(rustc +nightly --version)"
  if [ "$have" != "$NIGHTLY_WANT" ]; then
    echo "the nightly toolchain is '$have', but the std source in $RUST_SRC_DEB fits '$NIGHTLY_WANT' only" >&2
    exit 1
  fi
  [ -f "$RUST_SRC_DEB" ] || { echo "$RUST_SRC_DEB is missing (../shared/toolchains)" >&2; exit 1; }
  local dir="$TOOLCHAIN_CACHE/rust-src-1.97.1+dfsg1-1"
  # The package is hash-checked on every run; its unpacked copy is reused only when it was
  # unpacked whole from a package of that hash.
  echo "$RUST_SRC_SHA  $RUST_SRC_DEB" | sha256sum -c --quiet - || { echo "$RUST_SRC_DEB: wrong sha256" >&2; exit 1; }
  if [ "$(cat "$dir/.unpacked" 2>/dev/null)" != "$RUST_SRC_SHA" ]; then
    rm -rf "$dir" && mkdir -p "$dir"
    dpkg-deb -x "$RUST_SRC_DEB" "$dir"
    echo "$RUST_SRC_SHA" >"$dir/.unpacked"
  fi
  local link
  link="$(rustc +nightly --print sysroot)/lib/rustlib/src/rust"
  mkdir -p "$(dirname "$link")"
  rm -rf "$link"
  ln -s "$dir/usr/lib/rustlib/src/rust" "$link"
}
