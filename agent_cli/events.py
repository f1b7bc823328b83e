"""Typed events the core emits and the UI renders (tests assert on them). The core never prints.

EventBus is a tiny synchronous fan-out: `emit` calls every subscriber on the emitting thread,
so subscribers must be quick and thread-safe (the REPL queues them for the UI thread).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Event:
    agent: str

    @property
    def kind(self) -> str:
        return type(self).__name__


@dataclass(frozen=True)
class TextDeltaEvent(Event):
    text: str


@dataclass(frozen=True)
class TextDone(Event):
    """The full text of one assistant message, once streaming ends; `sources` are the pages
    its citations point at ("title — url"), in order of first citation."""

    text: str
    sources: tuple[str, ...] = ()


@dataclass(frozen=True)
class ThinkingDone(Event):
    """The extended thinking of one assistant message, once streaming ends: its readable
    text, how many blocks were redacted, and how long the model thought."""

    text: str
    seconds: float = 0.0
    redacted: int = 0


@dataclass(frozen=True)
class ToolStarted(Event):
    tool: str
    summary: str  # short argument, e.g. the command or the path
    tool_use_id: str = ""
    input: dict[str, Any] | None = None  # the whole input (stream-json shows it)


@dataclass(frozen=True)
class ToolFinished(Event):
    tool: str
    summary: str
    ok: bool
    outcome: str  # one line: "12 lines", "denied by user", "exit 1"
    tool_use_id: str = ""
    content: str = ""  # the whole result the model sees (stream-json shows it)


@dataclass(frozen=True)
class UsageEvent(Event):
    input_tokens: int
    output_tokens: int
    total_tokens: int  # cumulative for this agent


@dataclass(frozen=True)
class AgentError(Event):
    message: str
    error_kind: str = "error"


@dataclass(frozen=True)
class TurnFinished(Event):
    stop_reason: str
    rounds: int


@dataclass(frozen=True)
class Compacted(Event):
    before_tokens: int
    after_tokens: int


@dataclass(frozen=True)
class TaskEvent(Event):
    """A board change (created, updated, claimed, completed, released, lease_expired) or a
    refused completion (verify_failed); the board builds and sends it (board/announce.py)."""

    action: str
    task_id: int
    subject: str = ""
    detail: str = ""


@dataclass(frozen=True)
class MessageEvent(Event):
    """A message sent between agents (agent = sender)."""

    to: str
    msg_type: str
    preview: str


@dataclass(frozen=True)
class StatusEvent(Event):
    """A teammate's lifecycle change: working, idle, waiting_plan, shutdown, failed."""

    status: str
    task_id: int | None = None
    reason: str = ""


@dataclass(frozen=True)
class RetryWait(Event):
    """A model call failed with a transient error; the agent waits `delay_s`, then sends
    attempt `attempt + 1` of `attempts` (models/retry.py). `until` is time.monotonic()."""

    attempt: int
    attempts: int
    delay_s: float
    error_kind: str
    message: str
    until: float = 0.0

    def describe(self, now: float | None = None) -> str:
        """'retrying in 4 s (overloaded, attempt 3/8)', counting down when `now` is given."""
        left = self.delay_s if now is None else max(0.0, self.until - now)
        shown = f"{left:.0f} s" if left >= 1 else f"{left:.1f} s"
        attempt = f"attempt {self.attempt + 1}/{self.attempts}"
        return f"retrying in {shown} ({self.error_kind}, {attempt})"


@dataclass(frozen=True)
class Notice(Event):
    """Anything else worth one line to the user."""

    text: str
    level: str = "info"
    data: dict[str, Any] = field(default_factory=dict)


Subscriber = Callable[[Event], None]


class EventBus:
    """Thread-safe publish/subscribe. Subscriber exceptions are swallowed (and counted)."""

    def __init__(self) -> None:
        self._subs: list[Subscriber] = []
        self._lock = threading.Lock()
        self.errors = 0

    def subscribe(self, fn: Subscriber) -> Callable[[], None]:
        with self._lock:
            self._subs.append(fn)

        def unsubscribe() -> None:
            with self._lock:
                if fn in self._subs:
                    self._subs.remove(fn)

        return unsubscribe

    def emit(self, event: Event) -> None:
        with self._lock:
            subs = list(self._subs)
        for fn in subs:
            try:
                fn(event)
            except Exception:
                self.errors += 1
