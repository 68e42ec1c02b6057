"""What the scripted model says on each wire, and what it reads in a request: Anthropic
Messages (SSE events or one JSON message), OpenAI Responses (SSE events) and the Gemini API
(one JSON response, alone or as SSE). Used by model_servers.py."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

Step = dict[str, Any]
Script = list[Step] | Callable[["Logged"], Step]


def say(text: str) -> Step:
    """A model turn that answers with text and ends the turn."""
    return {"text": text}


def tool(name: str, **arguments: Any) -> Step:
    """A model turn that calls one tool (the name as the agent exposes it to the model)."""
    return {"tool": name, "input": arguments}


@dataclass
class Logged:
    """One request the agent sent: which API, the path, the parsed JSON body."""

    api: str
    path: str
    body: dict[str, Any]
    at: float = field(default_factory=time.time)

    @property
    def tool_names(self) -> list[str]:
        return tool_names(self)

    def as_json(self) -> dict[str, Any]:
        return {"api": self.api, "path": self.path, "body": self.body, "at": self.at}


def tool_names(request: Logged) -> list[str]:
    """The names of the tools a request offers the model, flattened (Codex namespaces too)."""
    body = request.body
    names: list[str] = []
    if request.api == "gemini":
        for group in body.get("tools") or []:
            names += [d["name"] for d in group.get("functionDeclarations") or []]
        return names
    for entry in body.get("tools") or []:
        if entry.get("type") == "namespace":
            prefix = entry.get("name", "")
            names += [namespaced(prefix, t.get("name", "")) for t in entry.get("tools") or []]
        elif "name" in entry:
            names.append(entry["name"])
        elif isinstance(entry.get("function"), dict):
            names.append(entry["function"]["name"])
    return names


def namespaced(namespace: str, name: str) -> str:
    """Codex offers an MCP server's tools as one namespace (`mcp__toolhost`): the full name."""
    return name if not namespace else f"{namespace.removesuffix('__')}__{name}"


def split_namespace(name: str) -> tuple[str, str]:
    """`mcp__toolhost__read_file` -> (`mcp__toolhost`, `read_file`); other names: ("", name)."""
    parts = name.split("__", 2)
    if len(parts) == 3 and parts[0] == "mcp":
        return f"mcp__{parts[1]}", parts[2]
    return "", name


def turns_taken(request: Logged) -> int:
    """How many model turns the conversation of a request already holds."""
    body = request.body
    if request.api == "anthropic":
        return sum(1 for m in body.get("messages") or [] if m.get("role") == "assistant")
    if request.api == "gemini":
        return sum(1 for c in body.get("contents") or [] if c.get("role") == "model")
    items = body.get("input") or []
    if isinstance(items, str):
        return 0
    turns = 0
    previous_was_call = False
    for item in items:
        kind = item.get("type", "message")
        is_call = kind in ("function_call", "custom_tool_call", "local_shell_call")
        starts_call_turn = is_call and not previous_was_call
        if starts_call_turn or (kind == "message" and item.get("role") == "assistant"):
            turns += 1
        previous_was_call = is_call
    return turns


def copy_call(name: str) -> Step:
    """A model turn that makes the call the last tool result names (`NAME {json}`), as a
    model pages a truncated result back: `copy_call("mcp__toolhost__use_capability")`."""
    return {"tool": name, "input_from": name.rsplit("__", 1)[-1].rsplit("_toolhost_", 1)[-1]}


def pick_step(script: Script, request: Logged) -> Step:
    if callable(script):
        return script(request)
    if not tool_names(request):
        return say("ok")
    turn = turns_taken(request)
    step = script[turn] if turn < len(script) else say("done")
    if "input_from" in step:
        results = tool_results(request)
        named = named_call(results[-1] if results else "", step["input_from"])
        step = {"tool": step["tool"], "input": named if named is not None else {}}
    return step


def named_call(text: str, name: str) -> dict[str, Any] | None:
    """The JSON arguments written after the last `NAME ` in a tool result's text."""
    at = text.rfind(f"{name} {{")
    if at < 0:
        return None
    try:
        value, _ = json.JSONDecoder().raw_decode(text, at + len(name) + 1)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


# --- Anthropic Messages ---------------------------------------------------------------------


def anthropic_content(step: Step, ids: Iterator[int]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if step.get("text"):
        blocks.append({"type": "text", "text": step["text"]})
    if "tool" in step:
        blocks.append(
            {
                "type": "tool_use",
                "id": f"toolu_{next(ids):08d}",
                "name": step["tool"],
                "input": step["input"],
            }
        )
    return blocks


def anthropic_events(step: Step, model: str, ids: Iterator[int]) -> Iterator[tuple[str, Any]]:
    content = anthropic_content(step, ids)
    stop = "tool_use" if "tool" in step else "end_turn"
    usage = {"input_tokens": 10, "output_tokens": 1}
    message = {"id": f"msg_{next(ids):08d}", "type": "message", "role": "assistant"}
    message |= {"model": model, "content": [], "stop_reason": None, "stop_sequence": None}
    yield "message_start", {"type": "message_start", "message": message | {"usage": usage}}
    for index, block in enumerate(content):
        if block["type"] == "text":
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            start = block | {"input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield (
            "content_block_start",
            {"type": "content_block_start", "index": index} | {"content_block": start},
        )
        yield (
            "content_block_delta",
            {"type": "content_block_delta", "index": index} | {"delta": delta},
        )
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": 5},
        },
    )
    yield "message_stop", {"type": "message_stop"}


def anthropic_message(step: Step, model: str, ids: Iterator[int]) -> dict[str, Any]:
    return {
        "id": f"msg_{next(ids):08d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": anthropic_content(step, ids),
        "stop_reason": "tool_use" if "tool" in step else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


# --- OpenAI Responses -----------------------------------------------------------------------


def responses_items(step: Step, ids: Iterator[int]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if step.get("text"):
        text = {"type": "output_text", "text": step["text"], "annotations": []}
        items.append(
            {
                "type": "message",
                "id": f"msg_{next(ids):08d}",
                "role": "assistant",
                "status": "completed",
                "content": [text],
            }
        )
    if "tool" in step:
        call = {"type": "function_call", "id": f"fc_{next(ids):08d}", "status": "completed"}
        namespace, name = split_namespace(step["tool"])
        if namespace:
            call["namespace"] = namespace
        call |= {"call_id": f"call_{next(ids):08d}", "name": name}
        items.append(call | {"arguments": json.dumps(step["input"])})
    return items


def responses_events(step: Step, model: str, ids: Iterator[int]) -> Iterator[tuple[str, Any]]:
    response: dict[str, Any] = {"id": f"resp_{next(ids):08d}", "object": "response"}
    response |= {"created_at": int(time.time()), "model": model, "output": []}
    yield (
        "response.created",
        {"type": "response.created", "response": response | {"status": "in_progress"}},
    )
    items = responses_items(step, ids)
    for index, item in enumerate(items):
        yield (
            "response.output_item.added",
            {
                "type": "response.output_item.added",
                "output_index": index,
                "item": item,
            },
        )
        if item["type"] == "message":
            yield (
                "response.output_text.delta",
                {
                    "type": "response.output_text.delta",
                    "item_id": item["id"],
                    "output_index": index,
                    "content_index": 0,
                    "delta": item["content"][0]["text"],
                },
            )
        yield (
            "response.output_item.done",
            {
                "type": "response.output_item.done",
                "output_index": index,
                "item": item,
            },
        )
    usage = {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}
    usage |= {"input_tokens_details": {"cached_tokens": 0}}
    usage |= {"output_tokens_details": {"reasoning_tokens": 0}}
    done = response | {"status": "completed", "output": items, "usage": usage}
    yield "response.completed", {"type": "response.completed", "response": done}


# --- Gemini API -----------------------------------------------------------------------------


def gemini_response(step: Step) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    if step.get("text"):
        parts.append({"text": step["text"]})
    if "tool" in step:
        parts.append({"functionCall": {"name": step["tool"], "args": step["input"]}})
    candidate = {"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}
    usage = {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}
    return {"candidates": [candidate | {"index": 0}], "usageMetadata": usage}


# --- what reached the model -----------------------------------------------------------------


def flat_text(value: Any) -> str:
    """A tool result's content as one text: strings as they are, text parts joined."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(flat_text(part) for part in value)
    if isinstance(value, dict):
        if isinstance(value.get("text"), str):
            return value["text"]
        for key in ("output", "error", "content"):
            if key in value:
                return flat_text(value[key])
    return json.dumps(value)


def tool_results(request: Logged) -> list[str]:
    """The text of every tool result in a request's conversation, in order."""
    body = request.body
    if request.api == "anthropic":
        return [
            flat_text(block.get("content"))
            for message in body.get("messages") or []
            if isinstance(message.get("content"), list)
            for block in message["content"]
            if block.get("type") == "tool_result"
        ]
    if request.api == "gemini":
        return [
            flat_text(part["functionResponse"].get("response"))
            for content in body.get("contents") or []
            for part in content.get("parts") or []
            if "functionResponse" in part
        ]
    items = body.get("input") or []
    return [
        flat_text(item.get("output"))
        for item in items
        if isinstance(item, dict) and item.get("type") == "function_call_output"
    ]


def tool_schemas(request: Logged) -> dict[str, dict[str, Any]]:
    """Each offered tool's parameter schema as the model saw it, by full name."""
    body = request.body
    schemas: dict[str, dict[str, Any]] = {}
    if request.api == "gemini":
        for group in body.get("tools") or []:
            for declaration in group.get("functionDeclarations") or []:
                schema = declaration.get("parametersJsonSchema") or declaration.get("parameters")
                schemas[declaration["name"]] = schema or {}
        return schemas
    for entry in body.get("tools") or []:
        if entry.get("type") == "namespace":
            for inner in entry.get("tools") or []:
                full = namespaced(entry.get("name", ""), inner.get("name", ""))
                schemas[full] = inner.get("parameters") or {}
        elif "name" in entry:
            schemas[entry["name"]] = entry.get("input_schema") or entry.get("parameters") or {}
    return schemas
