"""A held task is never silently stuck: bounded reminders, then a report to the lead.

When a teammate's turn ends (text only, the `idle` tool, max_tokens, max_rounds) while it
holds an in-progress task that it neither completed nor reported as blocked this turn (a
denial, a failed verify, a pending plan, a message to the lead), the host gives it one more
turn with a reminder naming the task, its claim_token and the two ways out. The `idle` tool
called in that state answers with the reminder instead of ending the turn. At most
MAX_REMINDERS per claim; after that every such ending is reported to the lead ("alice ended 3
turns without completing #4 ...; it stays in progress with alice"), the idle reason says the
same, and the teammate waits for a message.

StallGuard is one teammate's bookkeeping (composition, not a layer): what blocked it this
turn, and how many reminders each claim has had. Its `after_turn` returns what the host must
do; the Teammate does it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..framing import neutralize

if TYPE_CHECKING:
    from ..board.models import Task

MAX_REMINDERS = 2
STALL_ENDINGS = frozenset({"end_turn", "idle", "max_tokens", "max_rounds"})


@dataclass(frozen=True)
class StallAction:
    """What the host does after a turn: `remind` (the next turn's content) or `report`
    (the message to the lead, also the idle reason)."""

    remind: str | None = None
    report: str | None = None


@dataclass
class StallGuard:
    """Reminder counts per claim and this turn's blockers for one teammate."""

    name: str
    blocker: str | None = None  # why this turn could not finish its task (e.g. failed verify)
    told_lead: bool = False  # the teammate messaged the lead itself this turn
    plan_refusal: str | None = None  # the plan gate refused a call: it must submit a plan
    _reminders: dict[str, int] = field(default_factory=dict)  # claim_token -> reminders sent
    _endings: dict[str, int] = field(default_factory=dict)  # claim_token -> unfinished endings
    _given_up: dict[str, str] = field(default_factory=dict)  # claim_token -> report text
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def begin_turn(self) -> None:
        self.blocker, self.told_lead, self.plan_refusal = None, False, None

    def note_blocked(self, why: str) -> None:
        self.blocker = why

    def note_told_lead(self) -> None:
        self.told_lead = True

    def hold_reason(self, held: Task) -> str | None:
        """The idle reason once the reminders for this claim are used up, else None."""
        with self._lock:
            return self._given_up.get(held.claim_token or "")

    def idle_reminder(self, held: Task | None, reported: bool) -> str | None:
        """The `idle` tool's answer while holding an unreported task (one reminder), else
        None (the tool goes idle)."""
        if held is None or reported:
            return None
        with self._lock:
            return self._next_reminder(held)

    def after_turn(self, held: Task | None, stop_reason: str, reported: bool) -> StallAction:
        """What to do after a turn that ended with `stop_reason` while holding `held`."""
        if held is None or reported or stop_reason not in STALL_ENDINGS:
            return StallAction()
        with self._lock:
            token = held.claim_token or ""
            self._endings[token] = self._endings.get(token, 0) + 1
            text = self._next_reminder(held, count_ending=False)
            if text is not None:
                return StallAction(remind=text)
            turns = max(self._endings[token], self._reminders.get(token, 0) + 1)
            report = (
                f"{self.name} ended {turns} turns without completing #{held.id} "
                f'"{held.subject}"; it stays in progress with {self.name}'
            )
            self._given_up[token] = report
            return StallAction(report=report)

    def _next_reminder(self, held: Task, count_ending: bool = True) -> str | None:
        token = held.claim_token or ""
        sent = self._reminders.get(token, 0)
        if sent >= MAX_REMINDERS:
            return None
        self._reminders[token] = sent + 1
        if count_ending:
            self._endings[token] = self._endings.get(token, 0) + 1
        return reminder_text(held, sent + 1)


def reminder_text(held: Task, number: int) -> str:
    """The reminder a teammate sees: the task, its claim_token, the two ways out."""
    return (
        f'<host-reminder task_id="{held.id}" n="{number}" of="{MAX_REMINDERS}">'
        f'You still hold task #{held.id} ("{neutralize(held.subject)}"), claim_token '
        f"{held.claim_token}, and it is not completed. Either finish it and call "
        f"complete_task with task_id {held.id}, this claim_token and a short result; or, if "
        "something blocks you, send_message to the lead saying what blocks it, then call "
        "idle.</host-reminder>"
    )
