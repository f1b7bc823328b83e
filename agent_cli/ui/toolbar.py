"""The bottom toolbar: model, permission mode, each teammate's state and task, task counts,
the lead's unread messages ("✉ 2 for lead, 1 plan": a teammate's plan waits), tokens used.
Also the task-state helpers /tasks shares (what counts as blocked).

Status reads the board and roster at most every `ttl` seconds (or at once after an event
marks it stale), so redraws stay cheap; a failing read shows as an error, never a crash.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .style import agent_ptk_style

STATE_MARKS = {
    "working": "▶",
    "idle": "⏸",
    "waiting_plan": "⧗",
    "failed": "✗",
    "shutdown": "■",
}


def open_blockers(task: Any, by_id: dict[int, Any]) -> list[int]:
    """Blockers of `task` that are not completed (a missing blocker still blocks)."""
    out = []
    for dep in task.blocked_by or []:
        other = by_id.get(dep)
        if other is None or other.status != "completed":
            out.append(dep)
    return out


def task_state(task: Any, by_id: dict[int, Any]) -> str:
    """completed | in_progress | blocked | pending."""
    if task.status == "pending" and open_blockers(task, by_id):
        return "blocked"
    return task.status


@dataclass
class Counts:
    done: int = 0
    in_progress: int = 0
    pending: int = 0
    blocked: int = 0
    problems: int = 0


def count_tasks(tasks: list[Any], problems: int = 0) -> Counts:
    by_id = {t.id: t for t in tasks}
    c = Counts(problems=problems)
    for t in tasks:
        state = task_state(t, by_id)
        if state == "completed":
            c.done += 1
        elif state == "in_progress":
            c.in_progress += 1
        elif state == "blocked":
            c.blocked += 1
        else:
            c.pending += 1
    return c


@dataclass
class StatusSnapshot:
    members: list[Any] = field(default_factory=list)
    counts: Counts = field(default_factory=Counts)
    lead_unread: int = 0  # messages for the lead that no turn has taken in yet
    plans_waiting: int = 0  # of which plan approval requests (a teammate is blocked)
    retries: dict[str, str] = field(default_factory=dict)  # agent -> "retrying in 4 s (...)"
    error: str = ""


class StatusCache:
    """Board and roster, re-read when stale. `mark_stale()` is safe from any thread."""

    def __init__(self, runtime: Any, ttl: float = 1.0) -> None:
        self.runtime = runtime
        self.ttl = ttl
        self._lock = threading.Lock()
        self._snap = StatusSnapshot()
        self._at = -1e9
        self._stale = True

    def mark_stale(self) -> None:
        self._stale = True

    def get(self) -> StatusSnapshot:
        now = time.monotonic()
        with self._lock:
            if not self._stale and now - self._at < self.ttl:
                return self._snap
            self._stale = False
            self._at = now
        snap = StatusSnapshot()
        try:
            board = self.runtime.board.snapshot()
            snap.counts = count_tasks(list(board.tasks), len(board.problems))
            snap.members = [
                m for m in self.runtime.roster.members()
                if m.status != "shutdown" and m.name != "lead"
            ]
            unread = self.runtime.team.lead_unread()
            snap.lead_unread = len(unread)
            snap.plans_waiting = sum(m.type == "plan_approval_request" for m in unread)
            retries = getattr(self.runtime, "retries", None)
            snap.retries = retries.waiting() if retries is not None else {}
        except Exception as exc:  # a toolbar must never take the prompt down
            snap.error = f"{type(exc).__name__}: {exc}"
        with self._lock:
            self._snap = snap
        return snap


def toolbar_fragments(
    snap: StatusSnapshot, model: str, mode: str, tokens: int, width: int = 0
) -> list[tuple[str, str]]:
    """prompt_toolkit formatted text for the toolbar (a list of (style, text)); in short words
    when `width` is known and the long form would not fit, so its end stays visible."""
    frags = _fragments(snap, model, mode, tokens, short=False)
    if width and sum(len(text) for _, text in frags) > width:
        frags = _fragments(snap, model, mode, tokens, short=True)
    return frags


def _fragments(
    snap: StatusSnapshot, model: str, mode: str, tokens: int, short: bool
) -> list[tuple[str, str]]:
    frags: list[tuple[str, str]] = [("class:tb.model", f" {model} "), ("", " ")]
    if mode == "bypassPermissions":
        frags.append(("class:tb.danger", " ⚠ bypassPermissions "))
    else:
        frags.append(("class:tb.mode", mode if short else f"mode: {mode}"))
    if snap.retries.get("lead"):
        frags.append(("class:tb.danger", f"  lead {snap.retries['lead']}"))
    frags.append(("", " │ " if short else "  │ "))
    if snap.members:
        for m in snap.members:
            mark = STATE_MARKS.get(m.status, "?")
            what = f"#{m.current_task}" if m.current_task else m.status.replace("_", " ")
            frags += [(agent_ptk_style(m.name) + " bold", m.name), ("", f" {mark} {what}  ")]
            if snap.retries.get(m.name):
                frags.append(("class:tb.danger", f"{snap.retries[m.name]}  "))
    else:
        frags.append(("class:tb.dim", "no teammates  "))
    frags.append(("", "│ "))
    frags += _task_fragments(snap.counts, short)
    if snap.lead_unread:
        plans = f", {snap.plans_waiting} plan" if snap.plans_waiting else ""
        frags.append(("", " │ " if short else "  │ "))
        frags.append(("class:tb.mail", f"✉ {snap.lead_unread}{plans}" if short
                      else f"✉ {snap.lead_unread} for lead{plans}"))
    frags.append(("", f" │ {format_tokens(tokens)} " if short
                  else f"  │ {format_tokens(tokens)} tokens "))
    if snap.error:
        frags.append(("class:tb.danger", f" {snap.error[:60]} "))
    return frags


def _task_fragments(c: Counts, short: bool) -> list[tuple[str, str]]:
    total = c.done + c.in_progress + c.pending + c.blocked
    if short:  # who is working shows in the teammates' marks
        frags = [("", f"tasks {c.done}/{total} done")]
    else:
        frags = [("", f"tasks {c.done} done · {c.in_progress} in progress · "
                      f"{c.pending} pending")]
    if c.blocked:
        frags.append(("", f" · {c.blocked} blocked"))
    if c.problems:
        frags.append(("class:tb.danger", f" · {c.problems} unreadable"))
    return frags


def format_tokens(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 1_000:
        return f"{n / 1_000:.1f}k"
    return str(n)


def total_tokens(lead_total: int, members: list[Any]) -> int:
    return lead_total + sum(int(getattr(m, "tokens", 0) or 0) for m in members)


ToolbarSource = Callable[[], list[tuple[str, str]]]
