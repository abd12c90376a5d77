#!/usr/bin/env python3
"""Makes the wheel of another platform from the one maturin built, with that platform's binary.

    scripts/wheel_platform.py WHEEL TAG BINARY OUT_DIR     (prints the new wheel's path)

maturin builds for the host only; the Python client and the metadata are the same on every
platform, so the other platforms' wheels differ in three things only: the binary in
`<name>-<version>.data/scripts/` (`toolreg.exe` on Windows), the `Tag:` in WHEEL, and the
filename. RECORD is written anew (sha256 and size of every file), as pip checks it on install.
The binary is the one already built (scripts/package.sh): nothing is compiled again.
"""
import base64
import hashlib
import os
import sys
import zipfile


def record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


def main() -> None:
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    src, tag, binary, out_dir = sys.argv[1:]
    name, version = os.path.basename(src).split("-")[:2]
    data_scripts = f"{name}-{version}.data/scripts/"
    dist_info = f"{name}-{version}.dist-info/"
    exe = os.path.basename(binary)

    with zipfile.ZipFile(src) as zin:
        files = {i.filename: zin.read(i) for i in zin.infolist() if not i.is_dir()}
    olds = [f for f in files if f.startswith(data_scripts)]
    if len(olds) != 1:
        sys.exit(f"{src}: expected one binary in {data_scripts}, found {olds}")
    if f"{dist_info}WHEEL" not in files or f"{dist_info}RECORD" not in files:
        sys.exit(f"{src}: no {dist_info}WHEEL or RECORD")
    del files[olds[0]]
    files[data_scripts + exe] = open(binary, "rb").read()

    wheel = files[f"{dist_info}WHEEL"].decode().splitlines()
    if not any(line.startswith("Tag: ") for line in wheel):
        sys.exit(f"{src}: WHEEL has no Tag")
    # The host's tags (maturin may write several) give way to the one of the new platform.
    kept = [line for line in wheel if line and not line.startswith("Tag: ")]
    files[f"{dist_info}WHEEL"] = ("\n".join(kept + [f"Tag: {tag}"]) + "\n").encode()

    del files[f"{dist_info}RECORD"]
    record = "".join(f"{path},{record_hash(data)},{len(data)}\n" for path, data in files.items())
    record += f"{dist_info}RECORD,,\n"

    out = os.path.join(out_dir, f"{name}-{version}-{tag}.whl")
    os.makedirs(out_dir, exist_ok=True)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zout:
        # dist-info last, as the wheel spec recommends (RECORD the very last).
        for path in sorted(files, key=lambda p: p.startswith(dist_info)):
            info = zipfile.ZipInfo(path, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (0o755 if path.startswith(data_scripts) else 0o644) << 16
            zout.writestr(info, files[path])
        info = zipfile.ZipInfo(f"{dist_info}RECORD", date_time=(1980, 1, 1, 0, 0, 0))
        info.external_attr = 0o644 << 16
        zout.writestr(info, record, zipfile.ZIP_DEFLATED)
    print(out)


if __name__ == "__main__":
    main()
