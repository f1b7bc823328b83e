"""Raw Messages API stream events -> our ModelEvents and the final assistant Message.

The Claude adapter (anthropic.py) feeds every raw event of `messages.create(stream=True)`
here instead of using the SDK's `messages.stream()`: that accumulator raises on the first
invalid tool-input JSON and the rest of the response would be lost. Each content block becomes:

- text -> a TextDelta per delta, and a TextBlock in the final message (empty ones dropped);
- thinking -> a ThinkingDelta per delta, and a ThinkingBlock with its signature, kept in
  place and unchanged (the API checks the signature when it is sent back); redacted_thinking
  -> a RedactedThinkingBlock with its opaque data;
- server_tool_use (web search / fetch run by the API) and its result block -> ServerToolBlocks
  kept whole, in place; a text block's citations_delta -> its `citations`;
- tool_use -> a ToolCall as soon as its block stops with a JSON object input. Input that is
  not a JSON object is kept as `{INVALID_INPUT_KEY: raw}` (the loop answers it with an error
  tool_result) -- unless the response stopped on max_tokens inside that last block: then the
  block is cut, left out of the message, and named in ResponseDone.truncated_tool.

Events are read by attribute (`event.type`, `event.delta` ...): no SDK import here.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .. import errors
from ..fsutil import parse_json
from .base import (
    INVALID_INPUT_KEY,
    SERVER_RESULT_TYPES,
    Message,
    ModelEvent,
    RedactedThinkingBlock,
    ResponseDone,
    ServerToolBlock,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ToolCall,
    ToolUseBlock,
    Usage,
)


@dataclass
class _Block:
    kind: str  # "text", "tool_use", "thinking", "redacted_thinking", "server_tool_use",
    # "server_result" or "other" (not kept)
    text: str = ""  # text, thinking, or a redacted block's data
    signature: str = ""
    tool_id: str = ""
    name: str = ""
    json: str = ""
    citations: list[dict[str, Any]] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict)  # a server tool block as it started
    stopped: bool = False
    call: ToolUseBlock | None = None  # set once emitted as a ToolCall


@dataclass
class StreamAccumulator:
    """Turns raw SDK stream events into our events and the final assistant Message."""

    blocks: dict[int, _Block] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)
    stop_reason: str | None = None
    started: bool = False

    def feed(self, event: Any) -> Iterator[ModelEvent]:
        kind = getattr(event, "type", None)
        if kind == "message_start":
            self.started = True
            self._usage(event.message.usage)
        elif kind == "content_block_start":
            self.blocks[event.index] = _start_block(event.content_block)
        elif kind == "content_block_delta":
            yield from self._delta(event.index, event.delta)
        elif kind == "content_block_stop":
            block = self.blocks.get(event.index)
            if block is not None:
                block.stopped = True
                if block.kind == "tool_use":
                    block.call = _parse_tool(block)
                    if block.call is not None:
                        yield ToolCall(block.call)
        elif kind == "message_delta":
            self.stop_reason = event.delta.stop_reason or self.stop_reason
            self._usage(event.usage)

    def _delta(self, index: int, delta: Any) -> Iterator[ModelEvent]:
        block = self.blocks.get(index)
        if block is None:
            return
        if delta.type == "text_delta" and block.kind == "text":
            block.text += delta.text
            if delta.text:
                yield TextDelta(delta.text)
        elif delta.type == "input_json_delta" and block.kind in ("tool_use", "server_tool_use"):
            block.json += delta.partial_json
        elif delta.type == "citations_delta" and block.kind == "text":
            block.citations.append(_as_dict(delta.citation))
        elif delta.type == "thinking_delta" and block.kind == "thinking":
            block.text += delta.thinking
            if delta.thinking:
                yield ThinkingDelta(delta.thinking)
        elif delta.type == "signature_delta" and block.kind == "thinking":
            block.signature += delta.signature

    def _usage(self, u: Any) -> None:
        values = {
            name: getattr(u, name, None)
            for name in (
                "input_tokens",
                "output_tokens",
                "cache_read_input_tokens",
                "cache_creation_input_tokens",
            )
        }
        server = getattr(u, "server_tool_use", None)
        for name in ("web_search_requests", "web_fetch_requests"):
            values[name] = getattr(server, name, None)
        # message_delta counts are cumulative: they overwrite; missing ones keep their value.
        self.usage = self.usage.model_copy(
            update={k: v for k, v in values.items() if isinstance(v, int)}
        )

    def finish(self) -> Iterator[ModelEvent]:
        """Events after the last raw event: late tool calls, then ResponseDone."""
        if not self.started or self.stop_reason is None:
            raise errors.ConnectionFailed("the model's stream ended before the response was done")
        content: list[Any] = []
        truncated: str | None = None
        last = max(self.blocks, default=None)
        for index in sorted(self.blocks):
            block = self.blocks[index]
            if block.kind == "text" and block.text:
                content.append(TextBlock(text=block.text, citations=block.citations or None))
            elif block.kind == "server_tool_use":
                if block.stopped:  # a call cut mid-input is left out with its result
                    content.append(ServerToolBlock(**_server_use(block)))
            elif block.kind == "server_result":
                content.append(ServerToolBlock(**block.raw))
            elif block.kind == "thinking" and block.signature:
                # unsigned = cut before it was done: the API would refuse it sent back
                content.append(ThinkingBlock(thinking=block.text, signature=block.signature))
            elif block.kind == "redacted_thinking":
                content.append(RedactedThinkingBlock(data=block.text))
            elif block.kind == "tool_use" and block.call is not None:
                content.append(block.call)
            elif block.kind == "tool_use":
                if self.stop_reason == "max_tokens" and index == last:
                    truncated = block.name
                    continue
                call = ToolUseBlock(
                    id=block.tool_id, name=block.name, input={INVALID_INPUT_KEY: block.json}
                )
                content.append(call)
                yield ToolCall(call)
        yield ResponseDone(
            message=Message(role="assistant", content=content),
            stop_reason=self.stop_reason,
            usage=self.usage,
            truncated_tool=truncated,
        )


def _start_block(cb: Any) -> _Block:
    if cb.type == "text":
        return _Block("text", text=cb.text or "")
    if cb.type == "tool_use":
        return _Block("tool_use", tool_id=cb.id, name=cb.name)
    if cb.type == "thinking":
        return _Block("thinking", text=getattr(cb, "thinking", "") or "",
                      signature=getattr(cb, "signature", "") or "")
    if cb.type == "redacted_thinking":
        return _Block("redacted_thinking", text=getattr(cb, "data", "") or "")
    if cb.type == "server_tool_use":
        return _Block("server_tool_use", tool_id=cb.id, name=cb.name, raw=_as_dict(cb))
    if cb.type in SERVER_RESULT_TYPES:
        return _Block("server_result", raw=_as_dict(cb))
    return _Block("other")


def _as_dict(obj: Any) -> dict[str, Any]:
    """An SDK object as the JSON the API sent (unset fields left out)."""
    if isinstance(obj, dict):
        return dict(obj)
    if hasattr(obj, "to_dict"):
        return obj.to_dict(mode="json")
    return obj.model_dump(mode="json", exclude_none=True)


def _server_use(block: _Block) -> dict[str, Any]:
    """The server_tool_use block whole, its input parsed from the streamed JSON."""
    try:
        value = parse_json(block.json) if block.json.strip() else block.raw.get("input", {})
    except ValueError:
        value = {}
    return {**block.raw, "input": value if isinstance(value, dict) else {}}


def _parse_tool(block: _Block) -> ToolUseBlock | None:
    """The complete tool_use, or None when its input is not a JSON object (decided later)."""
    try:
        value = parse_json(block.json) if block.json.strip() else {}
    except ValueError:  # parse_json: nesting too deep for the parser is a ValueError too
        return None
    if not isinstance(value, dict):
        return None
    return ToolUseBlock(id=block.tool_id, name=block.name, input=value)
