"""The model interface and the conversation types every adapter speaks.

These are our types, not the SDK's: the rest of agent-cli never imports anthropic. A Model
takes a ModelRequest and yields ModelEvents: TextDelta and ToolCall while streaming, then
exactly one ResponseDone carrying the whole assistant Message, the stop reason and usage.
Failures are raised as typed errors.ModelError subclasses.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, model_serializer

from ..errors import Interrupted


class TextBlock(BaseModel):
    """Text; `citations` (web search / fetch sources) are kept as the API sent them."""

    model_config = ConfigDict(defer_build=True)

    type: Literal["text"] = "text"
    text: str
    citations: list[dict[str, Any]] | None = None

    @model_serializer(mode="wrap")
    def _drop_empty(self, handler: Any) -> dict[str, Any]:
        data = handler(self)
        if data.get("citations") is None:
            data.pop("citations", None)
        return data


# A tool_use whose streamed input was not a JSON object arrives as {INVALID_INPUT_KEY: raw};
# the turn loop answers it with an is_error tool_result instead of running the tool.
INVALID_INPUT_KEY = "__invalid_json__"


class ToolUseBlock(BaseModel):
    model_config = ConfigDict(defer_build=True)

    type: Literal["tool_use"] = "tool_use"
    id: str
    name: str
    input: dict[str, Any] = Field(default_factory=dict)


IMAGE_TOKENS = 1600
PDF_PAGE_TOKENS = 2500


class MediaSource(BaseModel):
    """Base64 data and its media type, as the API takes an image or a PDF inline."""

    model_config = ConfigDict(defer_build=True)

    type: Literal["base64"] = "base64"
    media_type: str
    data: str


class ImageBlock(BaseModel):
    """An image the model sees. `label` ("shot.png 1280x720") is ours: never sent, it names
    the image wherever it is shown as text (a placeholder, a summary, the feed)."""

    model_config = ConfigDict(defer_build=True)

    type: Literal["image"] = "image"
    source: MediaSource
    label: str = ""

    def wire(self) -> dict[str, Any]:
        return {"type": "image", "source": self.source.model_dump()}

    def tokens(self) -> int:
        """About what the API counts for it: an image scaled to at most 1568 px on its long
        edge costs width*height/750 tokens, at most ~1600."""
        return IMAGE_TOKENS


class DocumentBlock(BaseModel):
    """A PDF the model reads; `label` and `pages` are ours (shown, estimated), never sent."""

    model_config = ConfigDict(defer_build=True)

    type: Literal["document"] = "document"
    source: MediaSource
    label: str = ""
    pages: int = 0

    def wire(self) -> dict[str, Any]:
        return {"type": "document", "source": self.source.model_dump()}

    def tokens(self) -> int:
        """About what the API counts: each page's text and a picture of it."""
        return PDF_PAGE_TOKENS * max(self.pages, 1)


MEDIA_TYPES = (ImageBlock, DocumentBlock)
ResultPart = Annotated[TextBlock | ImageBlock | DocumentBlock, Field(discriminator="type")]


def media_placeholder(block: ImageBlock | DocumentBlock, why: str = "") -> str:
    """The text that stands for an image or a PDF where it cannot be shown."""
    kind = "image" if isinstance(block, ImageBlock) else "PDF"
    name = block.label or block.source.media_type
    return f"[{kind} {name}{': ' + why if why else ''}]"


def content_text(content: str | list[Any]) -> str:
    """The text of a tool result in either form: the string, or its text parts joined with
    a placeholder for each image and document."""
    if isinstance(content, str):
        return content
    out = []
    for part in content:
        if isinstance(part, TextBlock):
            out.append(part.text)
        elif isinstance(part, MEDIA_TYPES):
            out.append(media_placeholder(part))
    return "\n".join(out)


class ToolResultBlock(BaseModel):
    """A tool's answer: a string, or a list of text, image and document parts (content_text
    gives the text of either form)."""

    model_config = ConfigDict(defer_build=True)

    type: Literal["tool_result"] = "tool_result"
    tool_use_id: str
    content: str | list[ResultPart]
    is_error: bool = False

    def text(self) -> str:
        return content_text(self.content)

    def media(self) -> list[ImageBlock | DocumentBlock]:
        return [] if isinstance(self.content, str) else [
            p for p in self.content if isinstance(p, MEDIA_TYPES)]


class ThinkingBlock(BaseModel):
    """Extended thinking, kept exactly as the API sent it: the signature proves to the API
    that the text is unchanged when it is sent back (tool-use turns require that)."""

    model_config = ConfigDict(defer_build=True)

    type: Literal["thinking"] = "thinking"
    thinking: str
    signature: str = ""


class RedactedThinkingBlock(BaseModel):
    """Thinking the API encrypted: opaque `data`, sent back unchanged."""

    model_config = ConfigDict(defer_build=True)

    type: Literal["redacted_thinking"] = "redacted_thinking"
    data: str


SERVER_RESULT_TYPES = ("web_search_tool_result", "web_fetch_tool_result")


class ServerToolBlock(BaseModel):
    """A tool the API ran itself (web search, web fetch): the `server_tool_use` call and its
    result block, kept whole and sent back exactly as received (`extra` holds every field)."""

    model_config = ConfigDict(defer_build=True, extra="allow")

    type: Literal["server_tool_use", "web_search_tool_result", "web_fetch_tool_result"]

    def field(self, name: str, default: Any = None) -> Any:
        return (self.model_extra or {}).get(name, default)


Block = Annotated[
    TextBlock | ToolUseBlock | ToolResultBlock | ThinkingBlock | RedactedThinkingBlock
    | ServerToolBlock | ImageBlock | DocumentBlock,
    Field(discriminator="type"),
]
THINKING_TYPES = (ThinkingBlock, RedactedThinkingBlock)


class Message(BaseModel):
    """One conversation turn. User turns hold tool_result blocks, then text, image and
    document blocks (attachments); assistant turns hold thinking (first), text and tool_use
    blocks."""

    model_config = ConfigDict(defer_build=True)

    role: Literal["user", "assistant"]
    content: list[Block]

    def tool_uses(self) -> list[ToolUseBlock]:
        return [b for b in self.content if isinstance(b, ToolUseBlock)]

    def text(self) -> str:
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))

    def thinking(self) -> str:
        """The readable thinking of this turn ("" when none, or only redacted)."""
        return "".join(b.thinking for b in self.content if isinstance(b, ThinkingBlock))


class ToolSpec(BaseModel):
    """What the model sees of a tool: name, description and the input's JSON schema."""

    model_config = ConfigDict(defer_build=True)

    name: str
    description: str
    input_schema: dict[str, Any]


class Usage(BaseModel):
    model_config = ConfigDict(defer_build=True)

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    web_search_requests: int = 0  # server tool uses, priced per use (pricing.json)
    web_fetch_requests: int = 0

    def add(self, other: Usage) -> Usage:
        return Usage(**{k: getattr(self, k) + getattr(other, k) for k in Usage.model_fields})

    @property
    def total(self) -> int:
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_read_input_tokens
            + self.cache_creation_input_tokens
        )


StopReason = Literal["end_turn", "tool_use", "max_tokens", "pause_turn", "refusal", "stop_sequence"]


class ModelRequest(BaseModel):
    """One call to a model. `agent` names the caller (the scripted model routes by it)."""

    model_config = ConfigDict(defer_build=True)

    agent: str
    system: str
    messages: list[Message]
    tools: list[ToolSpec] = Field(default_factory=list)
    max_tokens: int = 8192
    # tools the API runs itself (web_search, web_fetch definitions), offered next to `tools`
    server_tools: list[dict[str, Any]] = Field(default_factory=list)
    # the Messages API's `thinking` parameter ({"type": "enabled", "budget_tokens": N} or
    # {"type": "adaptive"}); None: no extended thinking (models/thinking.py)
    thinking: dict[str, Any] | None = None


@dataclass(frozen=True)
class TextDelta:
    text: str
    kind: Literal["text_delta"] = "text_delta"


@dataclass(frozen=True)
class ThinkingDelta:
    """A piece of extended thinking as it streams (shown dimmed; never part of the text)."""

    text: str
    kind: Literal["thinking_delta"] = "thinking_delta"


@dataclass(frozen=True)
class ToolCall:
    """A complete tool_use block, emitted as soon as its input JSON has streamed in."""

    block: ToolUseBlock
    kind: Literal["tool_call"] = "tool_call"


@dataclass(frozen=True)
class ResponseDone:
    """The last event of every successful stream.

    `message` is the assistant turn exactly as it must be appended to the conversation.
    `truncated_tool` names a tool_use that max_tokens cut mid-input (it is NOT in `message`).
    """

    message: Message
    stop_reason: str
    usage: Usage = field(default_factory=Usage)
    truncated_tool: str | None = None
    kind: Literal["response_done"] = "response_done"


ModelEvent = TextDelta | ThinkingDelta | ToolCall | ResponseDone


@runtime_checkable
class Model(Protocol):
    """A model adapter. `stream` must stop promptly (raising errors.Interrupted) once
    `cancel` is set, and must raise typed errors.ModelError subclasses on failure."""

    name: str

    def stream(
        self, request: ModelRequest, cancel: threading.Event | None = None
    ) -> Iterator[ModelEvent]: ...


def check_cancel(cancel: threading.Event | None) -> None:
    """Raise errors.Interrupted if `cancel` is set (adapters call it between events)."""
    if cancel is not None and cancel.is_set():
        raise Interrupted("interrupted")


def collect(events: Iterator[ModelEvent]) -> ResponseDone:
    """Drain a stream and return its ResponseDone (for callers that do not render deltas)."""
    done: ResponseDone | None = None
    for ev in events:
        if isinstance(ev, ResponseDone):
            done = ev
    if done is None:
        raise RuntimeError("model stream ended without a ResponseDone")
    return done
