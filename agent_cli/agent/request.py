"""One model call: the request checked before it goes out, and the response streamed back.

Before a request, the conversation is checked against the Messages API's rules
(`conversation.validate`). An invalid conversation is a bug somewhere: it is reported with a
warning Notice and repaired, or, with AGENT_CLI_STRICT_CONVERSATION=1 (the test suite sets
it), refused with an AssertionError naming every violation. Streaming turns the model's
events into the agent's events (a TextDeltaEvent per delta, TextDone for the final text) and
maps every way a stream can end: a response, an interrupt (with the text streamed so far),
a model error, or an adapter bug (reported as a ModelError, never a dead thread).
`stream_with_retries` wraps it in models/retry.py's Retrier: a transient failure is announced
as a RetryWait event and the same request is sent again after the backoff.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

from ..errors import Interrupted, ModelError
from ..events import (
    Event,
    Notice,
    RetryWait,
    TextDeltaEvent,
    TextDone,
    ThinkingDone,
    ToolFinished,
    ToolStarted,
)
from ..models.base import (
    Message,
    Model,
    ModelRequest,
    RedactedThinkingBlock,
    ResponseDone,
    ServerToolBlock,
    TextBlock,
    TextDelta,
    ThinkingDelta,
    ToolSpec,
)
from ..models.retry import Retrier, RetryInfo, RetryPolicy
from ..tools.base import ToolSet
from .conversation import repair, validate

STRICT_ENV = "AGENT_CLI_STRICT_CONVERSATION"


class PartialResponse(Interrupted):
    """The stream was interrupted; `text` is what had been streamed until then."""

    def __init__(self, text: str) -> None:
        super().__init__("interrupted")
        self.text = text


def checked_messages(
    messages: list[Message], agent: str, emit: Callable[[Event], None]
) -> list[Message] | None:
    """None when `messages` may be sent as they are; else their repaired form.

    A repair is announced with a warning Notice; in strict mode (STRICT_ENV=1) the Notice
    is followed by an AssertionError instead of the repair.
    """
    problems = validate(messages)
    if not problems:
        return None
    emit(Notice(agent, f"conversation repaired: {problems[0]}", "warning"))
    if os.environ.get(STRICT_ENV) == "1":
        raise AssertionError(
            f"{agent}: invalid conversation before a model request "
            f"({STRICT_ENV}=1): {'; '.join(problems)}"
        )
    return repair(messages)


class ToolSpecs:
    """The specs of a tool set, built again only when its tool names change."""

    def __init__(self) -> None:
        self._names: tuple[str, ...] = ()
        self._specs: list[ToolSpec] = []

    def of(self, tools: ToolSet) -> list[ToolSpec]:
        names = tuple(tools.names())
        if names != self._names:
            self._names, self._specs = names, tools.specs()
        return self._specs


def stream_response(
    model: Model,
    request: ModelRequest,
    cancel: threading.Event,
    emit: Callable[[Event], None],
) -> ResponseDone:
    """Stream one response, emitting its text as it comes.

    Raises PartialResponse when `cancel` is set mid-stream (or the adapter raised
    Interrupted), Interrupted when a stream closed by the cancel reports a failure, and
    ModelError for a failure, a stream with no response, or any other adapter exception.
    """
    import time

    agent = request.agent
    parts: list[str] = []
    done: ResponseDone | None = None
    started = time.monotonic()
    thought_until = started
    try:
        for ev in model.stream(request, cancel):
            if isinstance(ev, TextDelta):
                parts.append(ev.text)
                emit(TextDeltaEvent(agent, ev.text))
            elif isinstance(ev, ThinkingDelta):
                thought_until = time.monotonic()
            elif isinstance(ev, ResponseDone):
                done = ev
            if cancel.is_set():
                raise Interrupted("interrupted")
    except Interrupted:
        raise PartialResponse("".join(parts)) from None
    except ModelError:
        if cancel.is_set():  # a closed stream reported as a failure
            raise Interrupted("interrupted") from None
        raise
    except Exception as exc:  # an adapter bug must not kill the agent's thread
        raise ModelError(f"model failed: {type(exc).__name__}: {exc}") from exc
    if done is None:
        raise ModelError("the model stream ended without a response")
    redacted = sum(isinstance(b, RedactedThinkingBlock) for b in done.message.content)
    if done.message.thinking() or redacted:
        emit(ThinkingDone(agent, done.message.thinking(), round(thought_until - started, 1),
                          redacted))
    for started, finished in server_tool_events(agent, done.message):
        emit(started)
        emit(finished)
    if done.message.text():
        emit(TextDone(agent, done.message.text(), cited_sources(done.message)))
    return done


def server_tool_events(agent: str, message: Message) -> list[tuple[ToolStarted, ToolFinished]]:
    """A started/finished pair for each tool the API ran itself in `message` (web search,
    web fetch): shown like any tool call, after the fact."""
    blocks = [b for b in message.content if isinstance(b, ServerToolBlock)]
    results = {b.field("tool_use_id"): b for b in blocks if b.type != "server_tool_use"}
    out = []
    for use in (b for b in blocks if b.type == "server_tool_use"):
        name, args = str(use.field("name", "?")), use.field("input") or {}
        summary = str(args.get("query") or args.get("url") or "")
        ok, outcome = _server_outcome(results.get(use.field("id")))
        uid = str(use.field("id", ""))
        out.append((ToolStarted(agent, name, summary, uid, dict(args)),
                    ToolFinished(agent, name, summary, ok, outcome, uid, outcome)))
    return out


def _server_outcome(result: ServerToolBlock | None) -> tuple[bool, str]:
    if result is None:
        return False, "no result (the response ended first)"
    content = result.field("content")
    if isinstance(content, list):
        return True, f"{len(content)} result{'' if len(content) == 1 else 's'}"
    if isinstance(content, dict) and "error_code" in content:
        return False, f"error: {content['error_code']}"
    if isinstance(content, dict):
        return True, f"fetched {content.get('url', 'the page')}"
    return True, "done"


def cited_sources(message: Message) -> tuple[str, ...]:
    """"title — url" for every page the message's text cites, first citation first."""
    seen: dict[str, str] = {}
    for block in message.content:
        if isinstance(block, TextBlock):
            for c in block.citations or []:
                url = str(c.get("url") or "")
                if url and url not in seen:
                    seen[url] = f"{c.get('title') or url} — {url}" if c.get("title") else url
    return tuple(seen.values())


def stream_with_retries(
    model: Model,
    request: ModelRequest,
    cancel: threading.Event,
    emit: Callable[[Event], None],
    policy: RetryPolicy,
) -> ResponseDone:
    """stream_response, sent again after a transient failure (see models/retry.py). Each
    wait is a RetryWait event; the error that ends the retries says how long they took.
    Raises like stream_response (Interrupted when cancelled during a wait)."""
    agent = request.agent

    def announce(info: RetryInfo) -> None:
        import time

        emit(RetryWait(agent, info.attempt, info.attempts, info.delay_s, info.kind,
                       info.message, until=time.monotonic() + info.delay_s))

    retrier = Retrier(policy, cancel, announce)
    while True:
        try:
            return stream_response(model, request, cancel, emit)
        except PartialResponse:
            raise
        except ModelError as exc:
            if cancel.is_set():
                raise Interrupted("interrupted") from None
            if not retrier.wait(exc):
                note = retrier.gave_up() if exc.retryable else ""
                if note:
                    exc.args = (f"{exc}{note}",)
                raise
