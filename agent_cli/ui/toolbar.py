"""The bottom toolbar: model, permission mode, each teammate's state and task, task counts,
the lead's unread messages ("✉ 2 for lead, 1 plan": a teammate's plan waits), how full the
lead's context is ("ctx 12% of 200k": its real count, "~" when estimated), tokens used.
Also the task-state helpers /tasks shares (what counts as blocked).

Status reads the board and roster at most every `ttl` seconds (or at once after an event
marks it stale), so redraws stay cheap; a failing read shows as an error, never a crash.
While the runtime has not built its stores and the state is provably empty
(team/state_probe.py), nothing is read: a fresh workdir's first prompt builds no store.
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
            if self._stores_worth_reading():
                self._read_stores(snap)
            retries = getattr(self.runtime, "retries", None)
            snap.retries = retries.waiting() if retries is not None else {}
        except Exception as exc:  # a toolbar must never take the prompt down
            snap.error = f"{type(exc).__name__}: {exc}"
        with self._lock:
            self._snap = snap
        return snap

    def _stores_worth_reading(self) -> bool:
        """False while the stores are unbuilt and would read nothing (state_probe.py)."""
        rt = self.runtime
        location = getattr(rt, "location", None)
        if getattr(rt, "stores_open", True) or getattr(location, "kind", "files") != "files":
            return True  # the probe looks at files only: a database board is read
        from ..team.state_probe import provably_empty

        return not provably_empty(rt.tasks_dir, rt.team_dir)

    def _read_stores(self, snap: StatusSnapshot) -> None:
        board = self.runtime.board.snapshot()
        snap.counts = count_tasks(list(board.tasks), len(board.problems))
        snap.members = [m for m in self.runtime.roster.members()
                        if m.status != "shutdown" and m.name != "lead"]
        unread = self.runtime.team.lead_unread()
        snap.lead_unread = len(unread)
        snap.plans_waiting = sum(m.type == "plan_approval_request" for m in unread)


@dataclass(frozen=True)
class Form:
    """How much the toolbar says: `short` words; teammates "full" (state and task), "marks"
    (name and state mark) or "count" ("6 teammates: 2 working"); the model and the tokens."""

    short: bool = False
    mates: str = "full"
    model: bool = True
    tokens: bool = True
    mates_last: bool = False  # the teammates after the mail: what the terminal cuts first


# tried in order until one fits: the task counts and the lead's mail are in every form
FORMS = (Form(), Form(short=True), Form(short=True, mates="marks"),
         Form(short=True, mates="count"), Form(short=True, mates="count", tokens=False),
         Form(short=True, mates="count", model=False, tokens=False),
         Form(short=True, mates="count", model=False, tokens=False, mates_last=True))


def toolbar_fragments(
    snap: StatusSnapshot, model: str, mode: str, tokens: int, width: int = 0,
    context: Any = None,
) -> list[tuple[str, str]]:
    """prompt_toolkit formatted text for the toolbar (a list of (style, text)). When `width`
    is known, the first of FORMS that fits: shorter words, then teammates as marks, then as a
    count, then without the tokens and the model, then the count after the mail. The
    terminal cuts a line's right end, so the task counts and the lead's inbox count are
    never what goes."""
    from prompt_toolkit.formatted_text import fragment_list_width

    frags: list[tuple[str, str]] = []
    for form in FORMS if width else FORMS[:1]:
        frags = _fragments(snap, model, mode, tokens, form, context)
        if not width or fragment_list_width(frags) <= width:
            break
    return frags


def _fragments(
    snap: StatusSnapshot, model: str, mode: str, tokens: int, form: Form, context: Any = None
) -> list[tuple[str, str]]:
    short = form.short
    frags: list[tuple[str, str]] = [("class:tb.model", f" {model} "), ("", " ")] \
        if form.model else [("", " ")]
    if mode == "bypassPermissions":
        frags.append(("class:tb.danger", " ⚠ bypassPermissions "))
    else:
        frags.append(("class:tb.mode", mode if short else f"mode: {mode}"))
    if snap.retries.get("lead"):
        frags.append(("class:tb.danger", f"  lead {snap.retries['lead']}"))
    frags.append(("", " │ " if short else "  │ "))
    if not form.mates_last:
        frags += [*_team_fragments(snap, form.mates), ("", "│ ")]
    frags += _task_fragments(snap.counts, short)
    if snap.lead_unread:
        plans = f", {snap.plans_waiting} plan" if snap.plans_waiting else ""
        frags.append(("", " │ " if short else "  │ "))
        frags.append(("class:tb.mail", f"✉ {snap.lead_unread}{plans}" if short
                      else f"✉ {snap.lead_unread} for lead{plans}"))
    if form.mates_last:
        frags += [("", " │ "), *_team_fragments(snap, form.mates)]
    if form.tokens:
        ctx = context_text(context, short)
        frags.append(("", f" │ {ctx}{format_tokens(tokens)} " if short
                      else f"  │ {ctx}{format_tokens(tokens)} tokens "))
    if snap.error:
        frags.append(("class:tb.danger", f" {snap.error[:60]} "))
    return frags


def _team_fragments(snap: StatusSnapshot, mates: str) -> list[tuple[str, str]]:
    members = snap.members
    if not members:
        return [("class:tb.dim", "no teammates  ")]
    if mates == "count":
        return _team_count(snap)
    frags: list[tuple[str, str]] = []
    for m in members:
        mark = STATE_MARKS.get(m.status, "?")
        frags.append((agent_ptk_style(m.name) + " bold", m.name))
        if mates == "marks":
            frags.append(("", f" {mark}{' ↻' if snap.retries.get(m.name) else ''}  "))
            continue
        what = f"#{m.current_task}" if m.current_task else m.status.replace("_", " ")
        frags.append(("", f" {mark} {what}  "))
        if snap.retries.get(m.name):
            frags.append(("class:tb.danger", f"{snap.retries[m.name]}  "))
    return frags


def _team_count(snap: StatusSnapshot) -> list[tuple[str, str]]:
    """"6 teammates: 2 working" (", 1 failed", ", 1 retrying" when some are)."""
    members = snap.members
    n = len(members)
    text = f"{n} teammate{'s' if n != 1 else ''}: "
    text += f"{sum(m.status == 'working' for m in members)} working"
    frags = [("", text)]
    failed = sum(m.status == "failed" for m in members)
    if failed:
        frags.append(("class:tb.danger", f", {failed} failed"))
    retrying = sum(1 for m in members if snap.retries.get(m.name))
    if retrying:
        frags.append(("class:tb.danger", f", {retrying} retrying"))
    return [*frags, ("", "  ")]


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


def context_text(figure: Any, short: bool) -> str:
    """"ctx 12% of 200k · " (short: "ctx 12% · "), "~" before an estimate; "" when no
    reading yet (figure: agent.context.ContextFigure)."""
    if figure is None or not figure.used:
        return ""
    mark = "" if figure.exact else "~"
    if not figure.window:
        return f"ctx {mark}{format_tokens(figure.used)} · "
    if short:
        return f"ctx {mark}{figure.percent}% · "
    return f"ctx {mark}{figure.percent}% of {window_text(figure.window)} · "


def window_text(n: int) -> str:
    """A context window the way the model pages say it: "200k", "1M"."""
    if n >= 1_000_000 and n % 1_000_000 == 0:
        return f"{n // 1_000_000}M"
    if n >= 1_000 and n % 1_000 == 0:
        return f"{n // 1_000}k"
    return format_tokens(n)


def format_tokens(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 1_000:
        return f"{n / 1_000:.1f}k"
    return str(n)


def total_tokens(lead_total: int, members: list[Any]) -> int:
    return lead_total + sum(int(getattr(m, "tokens", 0) or 0) for m in members)


ToolbarSource = Callable[[], list[tuple[str, str]]]
