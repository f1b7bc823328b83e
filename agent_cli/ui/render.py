"""EventView: turns the core's events into what the user sees.

Teammate activity (claims, completions, messages, errors, state changes, tool calls) becomes
one line each, prefixed with the agent's name in its own colour. The lead's text streams into
a live region (shown above the prompt with a spinner) and is printed as Markdown once the
message is complete. `/verbose` also prints teammates' text as it streams: each teammate's
deltas are buffered apart and printed one completed line at a time (the rest at the end of
the message), so two teammates' half-lines never mix.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rich.text import Text

from ..events import (
    AgentError,
    Compacted,
    Event,
    MessageEvent,
    Notice,
    RetryWait,
    StatusEvent,
    TaskEvent,
    TextDeltaEvent,
    TextDone,
    ThinkingDone,
    ToolFinished,
    ToolStarted,
    TurnFinished,
    UsageEvent,
)
from ..safetext import visible
from .printer import Printer
from .style import agent_style, render_str, shorten

LEAD = "lead"
# Tools whose success already shows as its own line (a task, message or spawn event, or the
# status that follows): their "✓" tool line would say it twice. Failures are always shown.
SELF_REPORTING_TOOLS = frozenset({
    "create_task", "update_task", "claim_task", "complete_task", "spawn_teammate",
    "send_message", "broadcast", "request_shutdown", "review_plan", "submit_plan", "idle",
})
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
# Other stop reasons already arrive as an AgentError or Notice of their own.
STOP_NOTES = {"interrupted": "interrupted — tell the lead what to do instead"}


@dataclass
class UiSettings:
    verbose: bool = False  # print teammates' text, not only their actions


def agent_prefix(name: str) -> Text:
    return Text(f"{name:<8} ", style=agent_style(name))


def event_line(event: Event, verbose: bool = False) -> Text | None:
    """The one line an event shows as, or None when it shows nothing on its own."""
    line = agent_prefix(event.agent)
    if isinstance(event, ToolFinished):
        mark, style = ("✓", "green") if event.ok else ("✗", "red")
        # An error's reason is at its end ("cannot open /long/path: No space left on device")
        outcome = shorten(event.outcome, 60) if event.ok else cut_middle(event.outcome, 72)
        line.append(visible(event.tool, one_line=True), style="bold")
        line.append(f"({shorten(event.summary, 70)}) ")
        line.append(f"{mark} {outcome}", style=style)
    elif isinstance(event, TaskEvent):
        style = "red" if event.action == "verify_failed" else None
        line.append(f"{event.action.replace('_', ' ')} #{event.task_id}", style=style)
        if event.subject:
            line.append(f" {shorten(event.subject, 50)}")
        if event.detail:
            line.append(f" — {shorten(event.detail, 60)}", style="dim")
    elif isinstance(event, MessageEvent):
        kind = "" if event.msg_type == "message" else f" ({event.msg_type.replace('_', ' ')})"
        line.append(f"→ {visible(event.to, one_line=True)}{kind}: ", style="dim")
        line.append(shorten(event.preview, 80))
    elif isinstance(event, StatusEvent):
        line.append(_status_words(event), style="red" if event.status == "failed" else "dim")
    elif isinstance(event, AgentError):
        line.append(f"error ({event.error_kind}): {shorten(event.message, 100)}", style="red")
    elif isinstance(event, RetryWait):
        line.append(f"{event.describe()}: {shorten(event.message, 80)}", style="yellow")
    elif isinstance(event, Notice):
        style = {"warning": "yellow", "warn": "yellow", "error": "red"}.get(event.level, "dim")
        line.append(shorten(event.text, 120), style=style)
    elif isinstance(event, ThinkingDone):
        if event.agent != LEAD and not verbose:
            return None
        line.append(thought_summary(event), style="dim italic")
    elif isinstance(event, Compacted):
        line.append(
            f"compacted its context: {event.before_tokens:,} → {event.after_tokens:,} tokens",
            style="dim",
        )
    elif isinstance(event, TurnFinished) and (event.agent, event.stop_reason) == (
        LEAD, "interrupted"
    ):
        line.append(STOP_NOTES[event.stop_reason], style="yellow")
    else:
        return None
    return line


def thought_summary(event: ThinkingDone) -> str:
    """'✻ thought for 6s · ctrl-o to read it': thinking collapsed to one line."""
    words = f"✻ thought for {event.seconds:g}s"
    if event.redacted:
        words += f" ({event.redacted} block{'s' if event.redacted > 1 else ''} redacted)"
    return words + (" · ctrl-o to read it" if event.text else "")


def last_thinking(messages: list[Any]) -> str:
    """The readable thinking of the latest assistant turn that had any ("" when none)."""
    for message in reversed(messages):
        if message.role == "assistant" and message.thinking():
            return message.thinking()
    return ""


def cut_middle(text: str, limit: int) -> str:
    """The first line of `text`; when too long, its start and end around an ellipsis."""
    line = shorten(text, 10**6)
    if len(line) <= limit:
        return line
    head = (limit - 1) // 2
    return line[:head] + "…" + line[len(line) - (limit - 1 - head):]


def _status_words(event: StatusEvent) -> str:
    if event.status == "working":
        return f"is working on #{event.task_id}" if event.task_id else "is working"
    if event.status == "idle":
        return f"is idle: {shorten(event.reason, 200)}" if event.reason else "is idle"
    if event.status == "waiting_plan":
        return "waits for plan approval"
    if event.status == "shutdown":
        return "shut down" + (f": {shorten(event.reason, 200)}" if event.reason else "")
    return f"{event.status}" + (f": {shorten(event.reason, 200)}" if event.reason else "")


class EventView:
    """Subscriber for runtime.events. Thread-safe: events arrive on any agent's thread."""

    def __init__(
        self,
        printer: Printer,
        settings: UiSettings,
        width: Callable[[], int],
        color: bool,
        on_change: Callable[[], None] = lambda: None,
    ) -> None:
        self.printer = printer
        self.settings = settings
        self.width = width
        self.color = color
        self.on_change = on_change
        self._lock = threading.Lock()
        self._stream = ""  # the lead's message so far
        self._activity = ""  # what the lead is doing now ("shell(ls)")
        self._status: dict[str, str] = {}  # each agent's last status, to skip repeats
        self._claimed: dict[str, int] = {}  # each agent's last claimed task
        self._partial: dict[str, str] = {}  # each teammate's streamed text after its last \n

    def handle(self, event: Event) -> None:
        if isinstance(event, (UsageEvent, StatusEvent, TaskEvent, TurnFinished, MessageEvent,
                              RetryWait)):
            self.on_change()
        if event.agent == LEAD and self._lead_live(event):
            return
        if event.agent != LEAD and self._teammate_text(event):
            return
        if not self._worth_a_line(event):
            return
        line = event_line(event, self.settings.verbose)
        if line is not None:
            self.printer.write(render_str(line, self.width(), self.color))

    def _worth_a_line(self, event: Event) -> bool:
        """False for an event whose news an earlier line already gave."""
        if isinstance(event, ToolFinished):
            return not (event.ok and event.tool in SELF_REPORTING_TOOLS)
        with self._lock:
            if isinstance(event, TaskEvent) and event.action == "claimed":
                self._claimed[event.agent] = event.task_id
            if not isinstance(event, StatusEvent):
                return True
            before = self._status.get(event.agent)
            self._status[event.agent] = event.status
            if event.status != "working":
                return True
            # "working" right after "claimed #N", or while already working, says nothing new.
            claimed = self._claimed.pop(event.agent, None)
            return before != "working" and claimed != event.task_id

    def _teammate_text(self, event: Event) -> bool:
        """Buffer a teammate's streamed text and, with /verbose, print each line once it is
        complete; True when the event needs nothing else printed."""
        if isinstance(event, RetryWait):  # the failed attempt's text is streamed again
            with self._lock:
                self._partial.pop(event.agent, None)
            return False
        if isinstance(event, TextDeltaEvent):
            with self._lock:
                text = self._partial.get(event.agent, "") + event.text
                done, _, self._partial[event.agent] = text.rpartition("\n")
            self._print_text(event.agent, done)
            return True
        if isinstance(event, (TextDone, TurnFinished)):
            with self._lock:
                rest = self._partial.pop(event.agent, None)
            if rest is None and isinstance(event, TextDone):
                rest = event.text  # nothing was streamed (a model that does not stream)
            self._print_text(event.agent, rest or "")
            return isinstance(event, TextDone)
        return False

    def _print_text(self, agent: str, text: str) -> None:
        """One block: each non-blank line of `text` after the agent's name (/verbose only)."""
        lines = [raw for raw in text.split("\n") if raw.strip()]
        if not lines or not self.settings.verbose:
            return
        block = Text("\n").join(agent_prefix(agent) + Text(visible(raw), style="italic")
                                for raw in lines)
        self.printer.write(render_str(block, self.width(), self.color))

    def _lead_live(self, event: Event) -> bool:
        """Update the lead's live region; True when the event needs nothing printed."""
        if isinstance(event, TextDeltaEvent):
            with self._lock:
                self._stream += event.text
            self.on_change()
            return True
        if isinstance(event, TextDone):
            with self._lock:
                self._stream = ""
            if event.text.strip():
                self.print_markdown(event.text)
            if event.sources:
                sources = Text("sources:", style="dim")
                for n, source in enumerate(event.sources, 1):
                    sources.append(f"\n  [{n}] {source}", style="dim")
                self.printer.write(render_str(sources, self.width(), self.color))
            self.on_change()
            return True
        if isinstance(event, ToolStarted):
            with self._lock:
                self._activity = f"{event.tool}({shorten(event.summary, 40)})"
            self.on_change()
            return True
        if isinstance(event, RetryWait):  # what a failed stream showed is sent again
            with self._lock:
                self._stream = ""
            self.on_change()
            return False
        if isinstance(event, (ToolFinished, TurnFinished)):
            with self._lock:
                self._activity = ""
                if isinstance(event, TurnFinished):
                    self._stream = ""
        return False

    def print_markdown(self, text: str) -> None:
        from rich.markdown import Markdown  # imported on first use: keeps start-up fast

        self.printer.write(render_str(Markdown(visible(text)), self.width(), self.color))

    def live(self) -> tuple[str, str]:
        """(tail of the lead's streaming text, current activity) for the prompt region."""
        with self._lock:
            return self._stream, self._activity

    def reset_live(self) -> None:
        with self._lock:
            self._stream = ""
            self._activity = ""


def spinner_line(started: float, activity: str, now: float | None = None) -> str:
    """'⠹ thinking… 12s · esc to interrupt' (or the tool being run instead of thinking)."""
    now = time.monotonic() if now is None else now
    elapsed = max(0.0, now - started)
    frame = SPINNER[int(elapsed * 10) % len(SPINNER)]
    doing = f"running {activity}" if activity else "thinking"
    return f"{frame} {doing}… {int(elapsed)}s · esc to interrupt"


def stream_tail(text: str, width: int, lines: int = 6) -> list[str]:
    """The last `lines` screen lines of the lead's streaming text, wrapped to `width`."""
    out: list[str] = []
    for raw in visible(text).split("\n")[-lines:] if text else []:
        while len(raw) > width:
            out.append(raw[:width])
            raw = raw[width:]
        out.append(raw)
    return out[-lines:]
