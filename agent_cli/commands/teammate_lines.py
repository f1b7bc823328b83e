"""What `agent-cli teammate` prints: one short line per thing its teammate does.

ActivityLines turns the session's events into lines (claimed #3, ran shell `make`: exit 0,
completed #3, waiting for approval of ..., shut down); AnnouncingBroker wraps whichever
approval broker the session has so a question that goes to a human is announced first.
Every line is one line: what a model or a file wrote is shown with its control characters
and newlines made visible.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from ..events import (
    AgentError,
    Event,
    MessageEvent,
    Notice,
    RetryWait,
    StatusEvent,
    TaskEvent,
    ToolFinished,
)
from ..safetext import visible
from ..shorten import shorten

WIDTH = 160
# their board change or message is the line
QUIET_TOOLS = {"claim_task", "complete_task", "send_message", "idle"}


def one_line(text: str, width: int = WIDTH) -> str:
    return shorten(visible(" ".join(str(text).split()), one_line=True), width)


class ActivityLines:
    """Event -> line for teammate `name` (events of other agents are not its own)."""

    def __init__(self, name: str, say: Callable[[str], None]) -> None:
        self.name = name
        self._say = say
        self._lock = threading.Lock()
        self._status: tuple[str, str] | None = None

    def on_event(self, event: Event) -> None:
        if event.agent != self.name:
            return
        line = self.line(event)
        if line:
            with self._lock:  # whole lines, whichever thread emits
                self._say(line)

    def line(self, event: Event) -> str | None:
        if isinstance(event, TaskEvent):
            return task_line(event)
        if isinstance(event, ToolFinished):
            if event.tool in QUIET_TOOLS:
                return None
            return f"ran {event.tool} {one_line(event.summary, 100)}: {one_line(event.outcome)}"
        if isinstance(event, StatusEvent):
            return self._status_line(event)
        if isinstance(event, MessageEvent) and event.msg_type != "shutdown_response":
            return f"sent {event.msg_type} to {event.to}: {one_line(event.preview, 100)}"
        if isinstance(event, Notice) and event.level == "warning":
            return f"warning: {one_line(event.text)}"
        if isinstance(event, AgentError):
            return f"model error ({event.error_kind}): {one_line(event.message)}"
        if isinstance(event, RetryWait):
            return (f"model {event.error_kind}: retry {event.attempt}/{event.attempts} in "
                    f"{event.delay_s:.1f} s")
        return None

    def _status_line(self, event: StatusEvent) -> str | None:
        key = (event.status, event.reason)
        if key == self._status:
            return None
        self._status = key
        if event.status == "shutdown":
            return "shut down"
        if event.status == "failed":
            return f"failed: {one_line(event.reason)}"
        if event.status == "waiting_plan":
            return "waiting for the lead to approve its plan"
        if event.status == "idle" and event.reason:
            return f"idle: {one_line(event.reason)}"
        return None

    def waiting(self, request: Any) -> None:
        """A question that goes to a human: said before the teammate waits for it."""
        with self._lock:
            self._say(f"waiting for approval of {request.tool} "
                      f"{one_line(request.summary, 100)}")


def task_line(event: TaskEvent) -> str:
    subject = one_line(event.subject, 80)
    detail = one_line(event.detail, 100)
    if event.action == "claimed":
        return f"claimed #{event.task_id} {subject}"
    if event.action == "completed":
        return f"completed #{event.task_id}" + (f": {detail}" if detail else "")
    if event.action in ("released", "lease_expired", "verify_failed"):
        return f"{event.action.replace('_', ' ')} #{event.task_id}" + (
            f": {detail}" if detail else "")
    return f"{event.action} #{event.task_id} {subject}".rstrip()


class AnnouncingBroker:
    """A broker that says "waiting for approval of ..." before a question reaches a human
    (an attached UI: the lead's terminal through a remote broker). Everything else is the
    wrapped broker's; with no UI its ask() refuses at once, as headless."""

    def __init__(self, inner: Any, on_wait: Callable[[Any], None]) -> None:
        self._inner = inner
        self._on_wait = on_wait

    def ask(self, request: Any, cancel: threading.Event | None = None) -> Any:
        if self._inner.ui_attached:
            self._on_wait(request)
        return self._inner.ask(request, cancel)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)
