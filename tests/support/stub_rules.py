"""The request rules of the Messages API, as the stub server enforces them.

`validate(body)` returns the API-style 400 message for a request the real API would refuse
(plus the stricter rules our design promises: strictly alternating roles, no trailing
assistant prefill), else None; images and PDFs are checked by stub_media. Kept apart from the
HTTP side so it can be tested alone.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from .stub_media import check_media

THINKING_KINDS = ("thinking", "redacted_thinking")
SERVER_TOOL_TYPES = {"web_search_20250305": "web_search", "web_fetch_20250910": "web_fetch"}
SERVER_RESULTS = ("web_search_tool_result", "web_fetch_tool_result")


def sign_thinking(text: str) -> str:
    """The stub's signature of a thinking block (the API's is opaque; ours is checkable)."""
    return "sig-" + hashlib.sha256(f"stub-thinking:{text}".encode()).hexdigest()[:32]


def validate(body: Any, *, count_only: bool = False) -> str | None:
    """Return the API-style error message for an invalid request, else None."""
    if not isinstance(body, dict):
        return "request body must be a JSON object"
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "model: Field required"
    if not count_only:
        mt = body.get("max_tokens")
        if not isinstance(mt, int) or isinstance(mt, bool) or mt < 1:
            return "max_tokens: Field required (a positive integer)"
    else:  # count_tokens takes no generation parameters
        for key in ("max_tokens", "stream", "temperature", "stop_sequences"):
            if key in body:
                return f"{key}: Extra inputs are not permitted"
    return (
        _check_system(body.get("system"))
        or _check_tools(body.get("tools"))
        or _check_messages(body.get("messages"), bool(body.get("tools")))
        or _check_thinking(body, count_only)
        or _check_cache_breakpoints(body)
        or check_media(body)
    )


def _check_system(system: Any) -> str | None:
    if system is None or isinstance(system, str):
        return None
    if not isinstance(system, list):
        return "system: Input should be a valid string or list"
    for i, block in enumerate(system):
        if not isinstance(block, dict) or block.get("type") != "text":
            return f"system.{i}: only text blocks are allowed"
        if not block.get("text"):
            return f"system.{i}: text content blocks must be non-empty"
    return None


def _check_tools(tools: Any) -> str | None:
    if tools is None:
        return None
    if not isinstance(tools, list):
        return "tools: Input should be a valid list"
    seen: set[str] = set()
    for i, tool in enumerate(tools):
        if isinstance(tool, dict) and "type" in tool:  # a tool the API runs itself
            if SERVER_TOOL_TYPES.get(tool["type"]) != tool.get("name"):
                return f"tools.{i}: unknown server tool {tool['type']!r} named {tool.get('name')!r}"
            if tool.get("allowed_domains") is not None and tool.get("blocked_domains") is not None:
                return f"tools.{i}: allowed_domains and blocked_domains cannot both be set"
            seen.add(tool["name"])
            continue
        name = tool.get("name") if isinstance(tool, dict) else None
        if not isinstance(name, str) or not (0 < len(name) <= 128):
            return f"tools.{i}.name: Field required"
        if name in seen:
            return "tools: Tool names must be unique."
        seen.add(name)
        schema = tool.get("input_schema")
        if not isinstance(schema, dict) or schema.get("type") != "object":
            return f"tools.{i}.input_schema.type: Input should be 'object'"
    return None


def _check_messages(messages: Any, has_tools: bool) -> str | None:
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    prev_tool_ids: list[str] = []
    seen_ids: set[str] = set()
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict) or msg.get("role") not in ("user", "assistant"):
            return f"messages.{i}.role: Input should be 'user' or 'assistant'"
        role = msg["role"]
        if i == 0 and role != "user":
            return 'messages: first message must use the "user" role'
        if i > 0 and messages[i - 1].get("role") == role:
            return f'messages: roles must alternate between "user" and "assistant" (messages.{i})'
        blocks, err = _blocks(msg.get("content"), i)
        if err:
            return err
        err = _check_blocks(blocks, i, role, prev_tool_ids, seen_ids, has_tools)
        if err:
            return err
        prev_tool_ids = [b["id"] for b in blocks if b.get("type") == "tool_use"]
    if messages[-1]["role"] == "assistant":
        if prev_tool_ids:
            return (
                f"messages.{len(messages) - 1}: `tool_use` ids were found without `tool_result` "
                f"blocks immediately after: {', '.join(prev_tool_ids)}"
            )
        return "messages: the conversation must end with a user turn (stub rule: no prefill)"
    return None


def _blocks(content: Any, i: int) -> tuple[list[dict], str | None]:
    if isinstance(content, str):
        if not content:
            return [], f"messages.{i}: all messages must have non-empty content"
        return [{"type": "text", "text": content}], None
    if not isinstance(content, list) or not content:
        return [], f"messages.{i}: all messages must have non-empty content"
    if not all(isinstance(b, dict) for b in content):
        return [], f"messages.{i}.content: blocks must be objects"
    return content, None


def _check_blocks(
    blocks: list[dict],
    i: int,
    role: str,
    prev_tool_ids: list[str],
    seen_ids: set[str],
    has_tools: bool,
) -> str | None:
    answered: list[str] = []
    for j, b in enumerate(blocks):
        kind, where = b.get("type"), f"messages.{i}.content.{j}"
        if kind == "text":
            if not isinstance(b.get("text"), str) or not b["text"]:
                return f"{where}: text content blocks must be non-empty"
        elif kind == "tool_use":
            if role != "assistant":
                return f"{where}: tool_use blocks are only allowed in assistant messages"
            if not has_tools:
                return f"{where}: requests which include tool_use blocks must define tools"
            if not isinstance(b.get("input"), dict):
                return f"{where}.input: Input should be a valid dictionary"
            if not isinstance(b.get("id"), str) or b["id"] in seen_ids:
                return f"{where}: `tool_use` ids must be unique"
            seen_ids.add(b["id"])
        elif kind == "tool_result":
            if role != "user":
                return f"{where}: tool_result blocks are only allowed in user messages"
            tid = b.get("tool_use_id")
            if tid not in prev_tool_ids or tid in answered:
                return (
                    f"{where}: unexpected `tool_use_id` found in `tool_result` blocks: {tid}. "
                    "Each `tool_result` block must have a corresponding `tool_use` block in "
                    "the previous message."
                )
            answered.append(tid)
        elif kind == "server_tool_use" or kind in SERVER_RESULTS:
            err = _check_server_block(b, blocks, where, role)
            if err:
                return err
        elif kind in ("image", "document"):  # their content: stub_media.check_media
            if role != "user":
                return f"{where}: {kind} blocks are only allowed in user messages"
        elif kind in THINKING_KINDS:
            if role != "assistant":
                return f"{where}: {kind} blocks are only allowed in assistant messages"
            if any(blocks[k].get("type") not in THINKING_KINDS for k in range(j)):
                return f"{where}: thinking blocks must come before any other block"
            signed = b.get("thinking") if kind == "thinking" else "[redacted]"
            proof = b.get("signature") if kind == "thinking" else b.get("data")
            if not isinstance(signed, str) or proof != sign_thinking(signed):
                return f"{where}: Invalid `signature` in `{kind}` block"
        else:
            return f"{where}.type: unsupported content block type {kind!r}"
    missing = [t for t in prev_tool_ids if t not in answered]
    if role == "user" and missing:
        return (
            f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately "
            f"after: {', '.join(missing)}. Each `tool_use` block must have a corresponding "
            "`tool_result` block in the next message."
        )
    return None


def _check_server_block(b: dict, blocks: list[dict], where: str, role: str) -> str | None:
    """A server tool call and its result travel together in one assistant message."""
    if role != "assistant":
        return f"{where}: {b['type']} blocks are only allowed in assistant messages"
    if b["type"] == "server_tool_use":
        answered = any(x.get("type") in SERVER_RESULTS and x.get("tool_use_id") == b.get("id")
                       for x in blocks)
        if not answered:
            return (f"{where}: `server_tool_use` {b.get('id')} has no result block in the same "
                    "message")
        return None
    used = any(x.get("type") == "server_tool_use" and x.get("id") == b.get("tool_use_id")
               for x in blocks)
    return None if used else f"{where}: {b['type']} for an unknown server_tool_use"


def _check_thinking(body: dict, count_only: bool = False) -> str | None:
    """Extended thinking: a valid parameter, max_tokens above a fixed budget, and a tool-use
    turn still being answered must start with the thinking it was given (sent back as is)."""
    thinking = body.get("thinking")
    if thinking is None:
        return None
    kind = thinking.get("type") if isinstance(thinking, dict) else None
    if kind not in ("enabled", "adaptive", "disabled"):
        return "thinking.type: Input should be 'enabled', 'adaptive' or 'disabled'"
    if kind == "disabled":
        return None
    if kind == "enabled":
        budget = thinking.get("budget_tokens")
        if not isinstance(budget, int) or budget < 1024:
            return "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
        if not count_only and not body.get("max_tokens", 0) > budget:
            return "`max_tokens` must be greater than `thinking.budget_tokens`"
    messages = body.get("messages") or []
    last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=None)
    if last is None:
        return None
    content = messages[last].get("content")
    blocks = content if isinstance(content, list) else []
    uses = any(b.get("type") == "tool_use" for b in blocks)
    if uses and blocks[0].get("type") not in THINKING_KINDS:
        return (
            f"messages.{last}.content.0.type: Expected `thinking` or `redacted_thinking`, but "
            f"found `{blocks[0].get('type')}`. When `thinking` is enabled, a final `assistant` "
            "message must start with a thinking block."
        )
    return None


def _check_cache_breakpoints(body: dict) -> str | None:
    found = json.dumps(body).count('"cache_control"')
    if found > 4:
        return f"A maximum of 4 blocks with cache_control may be provided. Found {found}."
    return None
