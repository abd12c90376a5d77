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
