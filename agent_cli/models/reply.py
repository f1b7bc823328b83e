"""What an offline model answers with (`Reply`), and the one path that streams it as events.

Every model that answers without a network speaks `Reply`: the scripted model and the demo
(models/), and the test wire stub (tests/stub_server.py, which frames it as Server-Sent
Events instead). `play` turns a Reply into TextDelta(s), one ToolCall per call and the
ResponseDone, with `Pacing` deciding how the text is cut and how long each piece waits.
`estimate_tokens` is the one rough token count (4 characters a token) they all report.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..fsutil import parse_json
from .base import (
    INVALID_INPUT_KEY,
    MEDIA_TYPES,
    Message,
    ModelEvent,
    ModelRequest,
    ResponseDone,
    ServerToolBlock,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ToolCall,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    check_cancel,
)

TOKENS_PER_CALL = 10  # what a tool call adds to the estimated output


@dataclass
class Call:
    """One tool call a reply makes. `input` as a str is the raw JSON the model wrote: a JSON
    object is its input, anything else arrives as {INVALID_INPUT_KEY: raw} (the wire stub
    sends it verbatim)."""

    name: str
    input: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None


@dataclass
class Reply:
    """One assistant response: extended thinking (when the request asked for it), text, then
    tool calls.

    stop_reason defaults to "tool_use" when there are calls, else "end_turn". `usage` is
    what to report instead of the estimate: a Usage as is, or a mapping of counts that
    replace the estimate's. `id_tag` goes into the ids generated for the calls, so a model
    that keeps no state can tell later which of its replies a call came from.
    """

    text: str = ""
    tool_calls: list[Call] = field(default_factory=list)
    stop_reason: str | None = None
    usage: Usage | Mapping[str, int] | None = None
    id_tag: str = ""
    thinking: str = ""  # sent only to a request with extended thinking on
    # tools the API ran itself (web search / fetch): their blocks as the API sends them,
    # before the text; `citations` go on the text block
    server_blocks: list[dict[str, Any]] = field(default_factory=list)
    citations: list[dict[str, Any]] = field(default_factory=list)

    @property
    def stop(self) -> str:
        return self.stop_reason or ("tool_use" if self.tool_calls else "end_turn")

    def given_usage(self) -> dict[str, int]:
        """The token counts this reply gives (all four for a Usage; none by default)."""
        if isinstance(self.usage, Usage):
            return self.usage.model_dump()
        return dict(self.usage or {})


@dataclass(frozen=True)
class Pacing:
    """How a reply streams: its text line by line, or `typed` in quarters of its words (as
    if someone typed it), with `pause_s` before each piece and each tool call."""

    pause_s: float = 0.0
    typed: bool = False

    def pieces(self, text: str) -> list[str]:
        if not self.typed:
            return text.splitlines(keepends=True)
        words = text.split(" ")
        size = max(1, len(words) // 4)
        return [
            " ".join(words[i : i + size]) + ("" if i + size >= len(words) else " ")
            for i in range(0, len(words), size)
        ]

    def wait(self, cancel: threading.Event) -> None:
        """Pause (cut short by `cancel`), then raise errors.Interrupted if it is set."""
        if self.pause_s > 0:
            cancel.wait(self.pause_s)
        check_cancel(cancel)


def estimate_tokens(text: str) -> int:
    """A rough token count: 4 characters a token, at least 1 for any text."""
    return max(1, len(text) // 4) if text else 0


def reply_tokens(text: str, calls: int) -> int:
    """The estimated output of a reply with `text` and `calls` tool calls."""
    return estimate_tokens(text) + TOKENS_PER_CALL * calls


def request_tokens(request: ModelRequest) -> int:
    """The estimated input of a request: its system prompt, messages and tools (an image or
    PDF at what the API counts for it, not its base64 length)."""
    try:
        body = request.model_dump_json(include={"messages", "tools"})
    except ValueError:  # pydantic's JSON has no room for a lone surrogate; the count does
        body = json.dumps(request.model_dump(mode="json", include={"messages", "tools"}),
                          ensure_ascii=False, separators=(",", ":"))
    media = [p for m in request.messages for b in m.content
             for p in (b.media() if isinstance(b, ToolResultBlock) else [b])
             if isinstance(p, MEDIA_TYPES)]
    return estimate_tokens(request.system + body) + sum(
        p.tokens() - len(p.source.data) // 4 for p in media)


def reply_usage(reply: Reply, input_tokens: int) -> Usage:
    """The usage a reply reports: its own, or the estimate with its given counts applied."""
    if isinstance(reply.usage, Usage):
        return reply.usage
    estimate = Usage(
        input_tokens=input_tokens,
        output_tokens=reply_tokens(reply.text, len(reply.tool_calls)),
    )
    return estimate.model_copy(update=reply.given_usage())


def call_input(raw: dict[str, Any] | str) -> dict[str, Any]:
    """A Call's input as a tool_use block carries it (see Call)."""
    if isinstance(raw, dict):
        return dict(raw)
    try:
        value = parse_json(raw) if raw.strip() else {}
    except ValueError:  # not JSON, or nested too deeply to parse
        value = None
    return value if isinstance(value, dict) else {INVALID_INPUT_KEY: raw}


def play(
    reply: Reply,
    request: ModelRequest,
    new_id: Callable[[str], str],
    pacing: Pacing = Pacing(),
    cancel: threading.Event | None = None,
) -> Iterator[ModelEvent]:
    """Stream `reply` as a Model does; `new_id(reply.id_tag)` names a call that has no id."""
    cancel = cancel or threading.Event()
    content: list[ThinkingBlock | ServerToolBlock | TextBlock | ToolUseBlock] = []
    if reply.thinking and request.thinking:
        pacing.wait(cancel)
        yield ThinkingDelta(reply.thinking)
        content.append(ThinkingBlock(thinking=reply.thinking, signature="offline"))
    content += [ServerToolBlock(**b) for b in reply.server_blocks]
    if reply.text:
        for piece in pacing.pieces(reply.text):
            pacing.wait(cancel)
            yield TextDelta(piece)
        content.append(TextBlock(text=reply.text, citations=reply.citations or None))
    for call in reply.tool_calls:
        pacing.wait(cancel)
        block = ToolUseBlock(
            id=call.id or new_id(reply.id_tag), name=call.name, input=call_input(call.input)
        )
        content.append(block)
        yield ToolCall(block)
    check_cancel(cancel)
    yield ResponseDone(
        message=Message(role="assistant", content=content),
        stop_reason=reply.stop,
        usage=reply_usage(reply, request_tokens(request)),
    )
