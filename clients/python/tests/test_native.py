"""Native renderings (issue 10) from the real sidecar, checked by mypy against the official
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

HEADER = """from anthropic.types import ToolResultBlockParam, ToolUnionParam
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
from openai.types.responses import ResponseInputItemParam, ToolParam
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
        await c.registry_register(crm + [entry("notes_delete", approval=True)])
        a = await c.exposition_plan({}, context_window=8000, model="gpt-4o", render="anthropic")
        a_hosted = await c.exposition_plan({}, context_window=8000, render="anthropic", search="provider")
        o = await c.exposition_plan({}, context_window=8000, render="openai")
        o_hosted = await c.exposition_plan({}, context_window=8000, render="openai", search="provider")

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
        }
        good = tmp_path / "rendered.py"
        # repr() of JSON values is a valid Python literal (True/False/None included).
        good.write_text(HEADER + "".join(f"{k} = {v!r}\n" for k, v in values.items()))

        bad = tmp_path / "wrong.py"
        bad.write_text(HEADER + """t: ToolUnionParam = {"name": "x", "input_schema": {"type": "object"}, "defer_loading": "yes"}
b: ToolResultBlockParam = {"type": "tool_result", "tool_use_id": "t", "content": [{"type": "tool_reference", "name": "x"}]}
s: ResponseToolSearchOutputItemParamParam = {"type": "tool_search_output", "tools": [{"type": "namespace", "name": "n", "tools": []}]}
""")
        out = mypy(good, bad)
        assert "rendered.py:" not in out, f"mypy refused the rendered values:\n{out}"
        # The check can fail: each wrong line (after the header's imports) is an error.
        first = HEADER.count("\n") + 1
        for line in (first, first + 1, first + 2):
            assert f"wrong.py:{line}: error" in out, out
    finally:
        await c.close()
