"""Provider-native deferral (protocol 0.2, issue 10): a plan rendered for the Anthropic Messages
API or the OpenAI Responses API, and the answers to the model's tool calls in that provider's
terms; and a plan rendered for Gemini (issue 55: ``gemini_config``, for ``google-genai``). Plain dicts that the official ``anthropic`` and ``openai`` packages accept as request
params (the tests check them with mypy against those packages); neither is needed at run time.

    plan = await toolreg.exposition_plan(scope, render="anthropic")
    msg = anthropic.messages.create(model=..., max_tokens=..., messages=..., **anthropic_request(plan))
    # for each tool_use block of msg:
    block = await anthropic_tool_result(toolreg, plan, tool_use)
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Mapping

from ._protocol import InvokeResult, PlanResult

if TYPE_CHECKING:
    from .client import ToolregClient


def anthropic_request(plan: PlanResult) -> dict[str, Any]:
    """The plan's request fragment (``tools``, and ``system`` when something is deferred) for
    ``messages.create(**fragment, ...)``."""
    request = plan.get("request")
    if not isinstance(request, dict):
        raise ValueError('the plan was not rendered natively: ask exposition_plan(render="anthropic")')
    return dict(request)


def openai_request(plan: PlanResult) -> dict[str, Any]:
    """The plan's request fragment (``tools``, and ``instructions`` when something is deferred)
    for ``responses.create(**fragment, ...)``."""
    request = plan.get("request")
    if not isinstance(request, dict):
        raise ValueError('the plan was not rendered natively: ask exposition_plan(render="openai")')
    return dict(request)


def gemini_config(plan: PlanResult) -> dict[str, Any]:
    """The plan's request as ``google-genai`` config fields (``tools``, and
    ``system_instruction`` when something is deferred), for
    ``client.models.generate_content(model=..., contents=..., config=types.GenerateContentConfig(**fragment))``.
    Gemini has no tool search of its own: the deferred tools are behind the meta-tools, so run
    every function call, ``tool_search`` too, with ``client.tool_invoke(name, args, plan_id=...)``."""
    request = plan.get("request")
    if not isinstance(request, dict) or "tools" not in request:
        raise ValueError('the plan was not rendered for Gemini: ask exposition_plan(render="gemini")')
    config: dict[str, Any] = {"tools": [
        {"function_declarations": [
            {"name": d["name"], "description": d["description"], "parameters_json_schema": d["parametersJsonSchema"]}
            for d in tool["functionDeclarations"]
        ]}
        for tool in request["tools"]
    ]}
    if "systemInstruction" in request:
        config["system_instruction"] = {"parts": [{"text": p["text"]} for p in request["systemInstruction"]["parts"]]}
    return config


def _text(r: InvokeResult) -> str:
    output: Any = r["output"]
    value = output.get("value")
    if output.get("type") == "content":
        return "\n".join(p.get("text", "") for p in value if p.get("type") == "text")
    return value if isinstance(value, str) else json.dumps(value)


def _get(obj: Any, key: str) -> Any:
    """A field of an SDK object or of a plain dict."""
    return obj[key] if isinstance(obj, Mapping) else getattr(obj, key)


async def anthropic_tool_result(client: "ToolregClient", plan: PlanResult, tool_use: Any) -> dict[str, Any]:
    """Runs one ``tool_use`` block (our ``tool_search``, or a tool the model called directly)
    through the sidecar; returns the ``tool_result`` block to send back: ``tool_reference``
    blocks for a search, text and ``image`` blocks for a result with images, the tool's text
    otherwise."""
    use_id, name, args = _get(tool_use, "id"), _get(tool_use, "name"), _get(tool_use, "input")
    r = await client.tool_invoke(name, args, call_id=use_id, plan_id=plan["planId"])
    provider = r.get("providerOutput")
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": use_id, "content": provider if isinstance(provider, list) else _text(r)}
    if r["isError"]:
        block["is_error"] = True
    return block


async def openai_tool_output(client: "ToolregClient", plan: PlanResult, item: Any) -> dict[str, Any]:
    """Runs one output item the host executes: a client ``tool_search_call`` (answered with the
    sidecar's ``tool_search_output`` item) or a ``function_call`` (``function_call_output``, its
    output a list of ``input_text`` and ``input_image`` items when the result has images)."""
    kind = _get(item, "type")
    if kind == "tool_search_call":
        call_id = _get(item, "call_id") or "tool_search"
        r = await client.tool_invoke("tool_search", _get(item, "arguments"), call_id=call_id, plan_id=plan["planId"])
        out = r.get("providerOutput")
        if not isinstance(out, dict):
            raise ValueError("the plan was not rendered for openai: tool_search answered no providerOutput")
        return out
    if kind != "function_call":
        raise ValueError(f"not an item the host runs: {kind!r}")
    call_id = _get(item, "call_id")
    r = await client.tool_invoke(_get(item, "name"), _get(item, "arguments"), call_id=call_id, plan_id=plan["planId"])
    provider = r.get("providerOutput")
    if isinstance(provider, dict):
        return dict(provider)
    return {"type": "function_call_output", "call_id": call_id, "output": _text(r)}
