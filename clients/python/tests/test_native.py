"""Native renderings (issue 10, and issue 27's programmatic callers) from the real sidecar, checked by mypy against the official
``anthropic`` and ``openai`` packages' types: the values are written out as dict literals
annotated with the SDK's TypedDicts, so unknown keys, missing keys and wrong literal values all
fail. A deliberately wrong file is checked too, to show that the check can fail."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from toolreg_client import anthropic_request, anthropic_tool_result, openai_request, openai_tool_output

from .conftest import entry

HEADER = """from anthropic.types import ToolParam as AnthropicToolParam, ToolResultBlockParam, ToolUnionParam
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
from openai.types.responses import FunctionToolParam, ResponseInputItemParam, ToolParam
from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming
from openai.types.responses.response_tool_search_output_item_param_param import ResponseToolSearchOutputItemParamParam
"""


CLIENT_DIR = Path(__file__).resolve().parent.parent


def mypy(*paths: Path) -> str:
    """mypy --strict over the files at once (the SDKs are large: one run, a kept cache)."""
    r = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent",
                        "--cache-dir", str(CLIENT_DIR / ".mypy_cache"), *map(str, paths)],
                       capture_output=True, text=True, cwd=paths[0].parent)
    return r.stdout + r.stderr


async def test_rendered_requests_and_outputs_type_check_against_the_sdks(spawn_real: Any, tmp_path: Path) -> None:
    async def execute(p: Any) -> Any:
        return {"content": [{"type": "text", "text": f"ran {p['name']}"}]}

    c = (await spawn_real(on_execute_tool=execute)).client
    try:
        crm = [entry(f"crm_tool_{i}", namespace="mcp:crm" if i < 7 else "mcp:billing", defer="always",
                     description=f"CRM operation {i} on customer records.") for i in range(14)]
        await c.registry_register(crm + [entry("notes_delete", approval=True), entry("notes_create", defer="never")])
        a = await c.exposition_plan({}, context_window=8000, model="gpt-4o", render="anthropic")
        a_hosted = await c.exposition_plan({}, context_window=8000, render="anthropic", search="provider")
        o = await c.exposition_plan({}, context_window=8000, render="openai")
        o_hosted = await c.exposition_plan({}, context_window=8000, render="openai", search="provider")
        # Marked for the provider's code execution (issue 27): every registered tool but the gated one.
        a_prog = await c.exposition_plan({}, context_window=8000, render="anthropic", programmatic={})
        a_only = await c.exposition_plan({}, context_window=8000, render="anthropic", search="provider",
                                         programmatic={"codeExecution": "code_execution_20260120", "direct": False})
        o_prog = await c.exposition_plan({}, context_window=8000, render="openai", programmatic={})
        a_tools = {t.get("name", t.get("type")): t for t in anthropic_request(a_prog)["tools"]}
        assert a_tools["notes_create"]["allowed_callers"] == ["direct", "code_execution_20250825"]
        assert a_tools["crm_tool_3"]["allowed_callers"] == ["direct", "code_execution_20250825"] and a_tools["crm_tool_3"]["defer_loading"]
        assert "allowed_callers" not in a_tools["notes_delete"], "an approval-gated tool is never marked"
        assert "allowed_callers" not in a_tools["tool_search"]
        assert a_tools["code_execution"] == {"type": "code_execution_20250825", "name": "code_execution"}
        only = {t.get("name"): t for t in anthropic_request(a_only)["tools"]}
        assert only["notes_create"]["allowed_callers"] == ["code_execution_20260120"]
        assert only["code_execution"]["type"] == "code_execution_20260120"
        o_tools = openai_request(o_prog)["tools"]
        assert {"type": "programmatic_tool_calling"} in o_tools
        o_fns = {t["name"]: t for t in o_tools if t["type"] == "function"}
        assert o_fns["notes_create"]["allowed_callers"] == ["direct", "programmatic"]
        assert "allowed_callers" not in o_fns["notes_delete"]
        members = [m for t in o_tools if t["type"] == "namespace" for m in t["tools"]]
        assert len(members) == 14 and all(m["allowed_callers"] == ["direct", "programmatic"] for m in members)
        o_prog_search = await openai_tool_output(c, o_prog, {"type": "tool_search_call", "call_id": "call_09", "arguments": {"query": "customer records"}})
        loaded = [m for ns in o_prog_search["tools"] for m in ns["tools"]]
        assert loaded and all(m["allowed_callers"] == ["direct", "programmatic"] for m in loaded)

        a_hit = await anthropic_tool_result(c, a, {"id": "toolu_01", "name": "tool_search", "input": {"query": "customer records"}})
        a_miss = await anthropic_tool_result(c, a, {"id": "toolu_02", "name": "tool_search", "input": {"query": "zebra xylophone"}})
        a_direct = await anthropic_tool_result(c, a, {"id": "toolu_03", "name": "crm_tool_3", "input": {"title": "x"}})
        assert a_hit["content"][0]["type"] == "tool_reference"
        assert a_miss["content"][0]["type"] == "text"
        assert a_direct["content"] == "ran crm_tool_3"
        o_search = await openai_tool_output(c, o, {"type": "tool_search_call", "call_id": "call_01", "arguments": {"query": "customer records"}})
        o_direct = await openai_tool_output(c, o, {"type": "function_call", "call_id": "call_02", "name": "crm_tool_3", "arguments": '{"title": "x"}'})
        assert o_search["type"] == "tool_search_output" and o_search["call_id"] == "call_01"
        assert o_direct == {"type": "function_call_output", "call_id": "call_02", "output": "ran crm_tool_3"}

        def anthropic(p: Any) -> dict[str, Any]:
            return {"model": "claude-sonnet-4-5", "max_tokens": 1024, "messages": [{"role": "user", "content": "hi"}], **anthropic_request(p)}

        def openai(p: Any) -> dict[str, Any]:
            return {"model": "gpt-5.4", "input": "hi", **openai_request(p)}

        turn = {**anthropic(a), "messages": [
            {"role": "user", "content": "find a crm tool"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_01", "name": "tool_search", "input": {"query": "customer records"}}]},
            {"role": "user", "content": [a_hit]},
        ]}
        o_turn = [{"type": "tool_search_call", "call_id": "call_01", "arguments": {"query": "customer records"}, "execution": "client", "status": "completed"},
                  o_search, o_direct]
        values = {
            "a: MessageCreateParamsNonStreaming": anthropic(a),
            "a_hosted: MessageCreateParamsNonStreaming": anthropic(a_hosted),
            "a_tools: list[ToolUnionParam]": anthropic_request(a)["tools"],
            "a_hit: ToolResultBlockParam": a_hit,
            "a_miss: ToolResultBlockParam": a_miss,
            "a_direct: ToolResultBlockParam": a_direct,
            "a_turn: MessageCreateParamsNonStreaming": turn,
            "o: ResponseCreateParamsNonStreaming": openai(o),
            "o_hosted: ResponseCreateParamsNonStreaming": openai(o_hosted),
            "o_tools: list[ToolParam]": openai_request(o)["tools"],
            "o_search: ResponseToolSearchOutputItemParamParam": o_search,
            "o_turn: list[ResponseInputItemParam]": o_turn,
            "a_prog: MessageCreateParamsNonStreaming": anthropic(a_prog),
            "a_only: MessageCreateParamsNonStreaming": anthropic(a_only),
            "a_prog_tools: list[ToolUnionParam]": anthropic_request(a_prog)["tools"],
            "o_prog: ResponseCreateParamsNonStreaming": openai(o_prog),
            "o_prog_tools: list[ToolParam]": o_tools,
            "o_prog_search: ResponseToolSearchOutputItemParamParam": o_prog_search,
        }
        good = tmp_path / "rendered.py"
        # repr() of JSON values is a valid Python literal (True/False/None included).
        good.write_text(HEADER + "".join(f"{k} = {v!r}\n" for k, v in values.items()))

        bad = tmp_path / "wrong.py"
        bad.write_text(HEADER + """t: ToolUnionParam = {"name": "x", "input_schema": {"type": "object"}, "defer_loading": "yes"}
b: ToolResultBlockParam = {"type": "tool_result", "tool_use_id": "t", "content": [{"type": "tool_reference", "name": "x"}]}
s: ResponseToolSearchOutputItemParamParam = {"type": "tool_search_output", "tools": [{"type": "namespace", "name": "n", "tools": []}]}
p: AnthropicToolParam = {"name": "x", "input_schema": {"type": "object"}, "allowed_callers": ["code_execution"]}
f: FunctionToolParam = {"type": "function", "name": "x", "parameters": {}, "strict": False, "allowed_callers": ["code"]}
""")
        out = mypy(good, bad)
        assert "rendered.py:" not in out, f"mypy refused the rendered values:\n{out}"
        # The check can fail: each wrong line (after the header's imports) is an error.
        first = HEADER.count("\n") + 1
        for line in (first, first + 1, first + 2, first + 3, first + 4):
            assert f"wrong.py:{line}: error" in out, out
    finally:
        await c.close()


async def test_a_tool_image_reaches_each_provider_its_way_and_type_checks(spawn_real: Any, tmp_path: Path) -> None:
    png = "iVBORw0KGgoAAAANSUhEUgAAABQAAAAUCAYAAACNiR0N"

    async def execute(p: Any) -> Any:
        return {"content": [{"type": "text", "text": "the screen"}, {"type": "image", "data": png, "mimeType": "image/png"}]}

    c = (await spawn_real(on_execute_tool=execute)).client
    try:
        await c.registry_register([entry("screenshot", defer="never")])
        plain = await c.tool_invoke("screenshot", {"title": "x"})
        assert plain["output"] == {"type": "content", "value": [{"type": "text", "text": "the screen"}, {"type": "image-data", "data": png, "mediaType": "image/png"}]}
        a = await c.exposition_plan({}, context_window=200000, model="claude-sonnet-4-5", render="anthropic")
        o = await c.exposition_plan({}, context_window=200000, model="gpt-4o", render="openai")
        shot = await anthropic_tool_result(c, a, {"id": "toolu_5", "name": "screenshot", "input": {"title": "x"}})
        assert shot["content"][1] == {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}}
        o_shot = await openai_tool_output(c, o, {"type": "function_call", "call_id": "call_5", "name": "screenshot", "arguments": '{"title": "x"}'})
        assert o_shot["output"][1] == {"type": "input_image", "image_url": f"data:image/png;base64,{png}", "detail": "high"}
        good = tmp_path / "shots.py"
        good.write_text(HEADER + f"shot: ToolResultBlockParam = {shot!r}\no_shot: ResponseInputItemParam = {o_shot!r}\n")
        out = mypy(good)
        assert "shots.py:" not in out, f"mypy refused the results:\n{out}"
    finally:
        await c.close()
