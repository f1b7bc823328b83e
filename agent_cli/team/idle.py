"""A teammate's idle check: where its next work comes from, and how it waits without spinning.

The check runs in a fixed order every time: (1) protocol messages, handled by the host before
any model call (a shutdown always wins over new work); (2) ordinary messages resume work,
labelled with their sender; (3) unless the latest plan is pending, rejected, expired or lost,
or the teammate still holds a task, claim the next ready task (through the team's ClaimGate,
closed while the team shuts down); (4) otherwise wait on the runtime's change signal,
re-checking cheap on-disk stamps when woken (the runtime's FileWatcher wakes it on other
processes' changes; without one, every check interval). No model call happens while
idle. After `idle_timeout_s` of waiting the teammate sends the lead one idle_notification;
from then on a board change no longer wakes it, a message does (and makes it watch the
board again).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from ..errors import CorruptFile, StorageError
from ..events import MessageEvent, TaskEvent
from ..framing import auto_claim_block, format_message, resumed_task_block
from ..names import LEAD
from . import plans, task_plans
from .claimgate import CLOSING
from .idle_hook import idle_hook_work
from .protocol_inbox import ProtocolInbox

if TYPE_CHECKING:
    from ..board.models import Task


class IdleLoop(ProtocolInbox):
    """The idle layer of a Teammate (see the module docstring)."""

    _idle_stamps: tuple | None  # (board, inbox, watching board) while waiting, else None
    _watch_board: bool  # False once the idle_notification went out
    _resume_held: bool  # the first idle check has not looked for a held task yet
    idle_hook_streak: int = 0  # turns in a row that a TeammateIdle hook asked for

    def is_quiet(self) -> bool:
        """Waiting idle, and nothing it watches has changed since its last empty scan."""
        stamps = self._idle_stamps
        if stamps is None or not self.alive():
            return not self.alive()
        board, inbox, watching = stamps
        if self.rt.mail.stamp(self.name) != inbox:
            return False
        return not watching or self.rt.board.stamp() == board

    def _next_work(self) -> list[str] | None:
        """Steps (1)-(4) until there is work; None when a shutdown was accepted."""
        timeout = self.rt.config.idle_timeout_s
        idle_deadline = time.monotonic() + timeout if timeout > 0 else None
        self._watch_board = True
        idle_hook = True  # TeammateIdle runs once per idle period, before the first wait
        while True:
            gen = self.rt.changes.generation
            stamps = (self.rt.board.stamp(), self.rt.mail.stamp(self.name))
            if self._sort_inbox():
                self._shut_down(self._shutdown_msg)
                return None
            self._note_plan_expiry()
            self._resume_interrupted()
            if self._injections or self.intake.has_held():
                work = self._injections + [format_message(m) for m in self.intake.take_held()]
                self._injections = []
                self.idle_hook_streak = 0
                return work
            if self._watch_board:
                block = self._try_claim()
                if block is not None:
                    self.idle_hook_streak = 0
                    return [block]
            if idle_hook:
                idle_hook = False
                forced = idle_hook_work(self)
                if forced is not None:
                    return forced
            idle_deadline = self._wait(gen, stamps, idle_deadline)

    def _resume_interrupted(self) -> None:
        """Once, at the first idle check: a task this teammate still holds (a restart, a
        resumed session) becomes one turn that says it was interrupted, with task and token."""
        if not self._resume_held:
            return
        self._resume_held = False
        try:
            held = self._held()
        except (StorageError, CorruptFile):
            return
        if held is not None and self._hold_reason(None) is None:
            self._injections.append(resumed_task_block(held))

    def _try_claim(self) -> str | None:
        """Step (3): claim the next ready task, or record why there is none."""
        held = self._held()
        hold = self._hold_reason(held)
        if hold is not None:
            self._set_status(hold[0], held.id if held else None, hold[1])
            return None
        with self.team.claims.attempt() as allowed:
            if not allowed:  # the team is closing: a released task stays released
                self._set_status("idle", None, CLOSING)
                return None
            try:
                res = self.rt.board.claim_next(self.name, role=self.role)
            except StorageError as exc:  # a full or read-only disk: wait for a board change
                self._set_status("idle", None, f"cannot claim: {exc}")
                return None
        if res.task is None:
            self._set_status("idle", None, res.reason)
            return None
        task = res.task
        self.rt.events.emit(
            TaskEvent(
                agent=self.name,
                action="claimed",
                task_id=task.id,
                subject=task.subject,
                detail="auto-claimed",
            )
        )
        self._set_status("working", task.id, "")
        return auto_claim_block(task) + self.rt.worktrees.prepare(task, self.name)

    def _hold_reason(self, held: Task | None) -> tuple[str, str] | None:
        """(status, idle reason) when step (3) must not claim now; None when it may."""
        try:
            latest, lost = self.plan_memory.state(self.rt.protocols, self.name)
        except CorruptFile as exc:  # fail closed: no claim while the plan state is unknown
            return "idle", plans.unreadable(exc)
        if not self.require_plan and task_plans.stale(latest, held):
            latest, lost = None, False  # a plan for a task it no longer holds decides nothing
        if lost and latest.status != "approved":
            return "idle", "plan request lost: submit_plan again"
        if latest is not None and self.rt.protocols.has_expired(latest):
            return "idle", plans.EXPIRED_REASON
        if latest is not None and latest.status == "pending":
            return "waiting_plan", "waiting for plan approval"
        if latest is not None and latest.status == "rejected":
            return "idle", "plan rejected: waiting for a message"
        if held is not None:
            why = (
                self.stalls.hold_reason(held)
                or self._denial
                or self.stalls.blocker
                or self.stalls.plan_refusal
                or "waiting for a message (the task is not completed)"
            )
            return "idle", f"holds #{held.id}: {why}"
        return None

    def _wait(self, gen: int, stamps: tuple, idle_deadline: float | None) -> float | None:
        """Step (4): block until the inbox (or, while watched, the board) changes."""
        board0, inbox0 = stamps
        self._idle_stamps = (board0, inbox0, self._watch_board)
        self.team.state_changed()
        try:
            while True:
                wait_s = self.rt.recheck_interval()
                if idle_deadline is not None:
                    left = idle_deadline - time.monotonic()
                    if left <= 0:
                        self._notify_idle()
                        idle_deadline = None
                        self._idle_stamps = (board0, inbox0, self._watch_board)
                        self.team.state_changed()
                    else:
                        wait_s = min(wait_s, left)
                self.rt.changes.wait(gen, wait_s)
                gen = self.rt.changes.generation
                if self.rt.mail.stamp(self.name) != inbox0:
                    self._watch_board = True
                    return idle_deadline
                if self._watch_board and self.rt.board.stamp() != board0:
                    return idle_deadline
                if self.plan_memory.expiry_due(self.rt.protocols):
                    return idle_deadline  # tell it to submit its plan again
        finally:
            self._idle_stamps = None

    def _notify_idle(self) -> None:
        """One idle_notification per idle period; then only a message wakes the teammate."""
        self._watch_board = False
        reason = self._status[2] if self._status else ""
        content = f"{self.name} is idle: {reason}" if reason else f"{self.name} is idle"
        self.rt.mail.send(self.name, LEAD, content, type="idle_notification")
        self.rt.events.emit(
            MessageEvent(agent=self.name, to=LEAD, msg_type="idle_notification", preview=content)
        )
