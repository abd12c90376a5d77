"""The Gemini rendering (issue 55) of the 2,422 fixture tools from the real sidecar, checked with
``google-genai``'s own types (pydantic models that forbid unknown fields): every declaration, the
request as the sidecar sends it (camelCase) and ``gemini_config``'s form (snake_case). The types
check the structure only; the names and schemas are checked here against Gemini's rules."""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from typing import Any

import pytest
from google.genai import types

from toolreg_client import gemini_config

NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$")


def fixture_entries(defer: str) -> list[dict[str, Any]]:
    """The 2,422 fixture tools as entries, as scripts/bench_plan_size.py registers them."""
    spec = importlib.util.spec_from_file_location("bench_plan_size", Path(__file__).resolve().parents[3] / "scripts" / "bench_plan_size.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    out: list[dict[str, Any]] = [{**e, "defer": defer} for e in bench.entries()]
    assert len(out) == 2422
    return out


def refs_resolve(node: Any, root: Any) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if ref is not None:
            assert isinstance(ref, str) and ref.startswith("#"), ref
            target = root
            for part in [p for p in ref[1:].split("/") if p]:
                part = part.replace("~1", "/").replace("~0", "~")
                assert part in target, f"{ref} does not resolve"
                target = target[part]
        for v in node.values():
            refs_resolve(v, root)
    elif isinstance(node, list):
        for v in node:
            refs_resolve(v, root)


@pytest.mark.parametrize("defer", ["never", "always"])
async def test_gemini_declarations_are_accepted_by_google_genai(spawn_real: Any, defer: str) -> None:
    c = (await spawn_real()).client
    try:
        entries = fixture_entries(defer)
        for i in range(0, len(entries), 1000):
            await c.registry_register(entries[i:i + 1000])
        plan = await c.exposition_plan({}, context_window=128000, model="gemini-2.5-pro", render="gemini")
        request = plan["request"]
        assert isinstance(request, dict)
        decls = request["tools"][0]["functionDeclarations"]
        names = [d["name"] for d in decls]
        if defer == "never":
            assert len(decls) == 2422 + 1, len(decls)  # every tool, and tool_result_read
            assert "systemInstruction" not in request
        else:
            assert names == ["tool_search", "tool_inspect", "tool_invoke", "tool_result_read"]
            assert "DEFERRED_TOOLS" in request["systemInstruction"]["parts"][0]["text"]
        for d in decls:
            fd = types.FunctionDeclaration.model_validate(d)
            assert fd.name == d["name"] and fd.parameters_json_schema == d["parametersJsonSchema"]
            assert NAME.match(d["name"]), d["name"]
            schema = d["parametersJsonSchema"]
            assert isinstance(schema, dict) and schema.get("type") == "object", d["name"]
            refs_resolve(schema, schema)
        # The whole request as sent (camelCase), and the helper's form (snake_case).
        sent = types.GenerateContentConfig.model_validate(request)
        config = types.GenerateContentConfig(**gemini_config(plan))
        assert sent.tools is not None and config.tools is not None
        assert sent.tools[0].function_declarations == config.tools[0].function_declarations
        assert (sent.system_instruction is None) == (defer == "never") == (config.system_instruction is None)
        # A wrong key is refused by the types: the check can fail.
        with pytest.raises(Exception):
            types.FunctionDeclaration.model_validate({**decls[0], "parameters_schema": {}})
        if defer == "always":
            # tool/invoke is unchanged: the model's tool_search call runs as in a portable plan.
            r = await c.tool_invoke("tool_search", {"query": "create a github issue"}, plan_id=plan["planId"])
            assert not r["isError"] and "providerOutput" not in r
    finally:
        await c.close()
