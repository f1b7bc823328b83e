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
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..errors import CorruptFile, StorageError
from ..events import MessageEvent
from ..framing import auto_claim_block, format_message, resumed_task_block
from ..names import LEAD
from .claimgate import CLOSING

if TYPE_CHECKING:
    from ..board.models import Task
    from ..board.store import TaskBoard
    from ..events import EventBus
    from ..wakeup import ChangeSignal
    from .claimgate import ClaimGate
    from .endings import Endings
    from .intake import Intake
    from .mailbox import Mailbox
    from .protocol import ProtocolStore
    from .protocol_inbox import ProtocolInbox
    from .teammate_state import TeammateState
    from .tracking import Tracking


class IdleLoop:
    """One teammate's idle check (see the module docstring)."""

    def __init__(
        self,
        state: TeammateState,
        *,
        tracking: Tracking,
        inbox: ProtocolInbox,
        endings: Endings,
        intake: Intake,
        board: TaskBoard,
        mail: Mailbox,
        events: EventBus,
        protocols: ProtocolStore,
        changes: ChangeSignal,
        claims: ClaimGate,
        idle_timeout_s: float,
        recheck: Callable[[], float],
        prepare: Callable[[Task, str], str],
        idle_hook: Callable[[], list[str] | None],
        on_state: Callable[[], None],
    ) -> None:
        self.state = state
        self.name = state.name
        self._tracking = tracking
        self._inbox = inbox
        self._endings = endings
        self._intake = intake
        self._board = board
        self._mail = mail
        self._events = events
        self._protocols = protocols
        self._changes = changes
        self._claims = claims
        self._idle_timeout_s = idle_timeout_s
        self._recheck = recheck  # how long a wait may sleep before re-checking the stamps
        self._prepare = prepare  # a claimed task's worktree: the text that tells the model
        self._idle_hook = idle_hook  # the TeammateIdle hook's work, or None
        self._on_state = on_state  # Team.state_changed: wakes wait_quiet

    def quiet(self) -> bool:
        """Waiting idle, and nothing it watches has changed since its last empty scan."""
        stamps = self.state.idle_stamps
        if stamps is None:
            return False
        board, inbox, watching = stamps
        if self._mail.stamp(self.name) != inbox:
            return False
        return not watching or self._board.stamp() == board

    def next_work(self) -> list[str] | None:
        """Steps (1)-(4) until there is work; None when a shutdown was accepted."""
        s = self.state
        timeout = self._idle_timeout_s
        idle_deadline = time.monotonic() + timeout if timeout > 0 else None
        s.watch_board = True
        idle_hook = True  # TeammateIdle runs once per idle period, before the first wait
        while True:
            gen = self._changes.generation
            stamps = (self._board.stamp(), self._mail.stamp(self.name))
            if self._inbox.sort():
                self._endings.shut_down(s.shutdown_msg)
                return None
            self._inbox.note_plan_expiry()
            self._resume_interrupted()
            if s.injections or self._intake.has_held():
                work = s.injections + [format_message(m) for m in self._intake.take_held()]
                s.injections = []
                s.idle_hook_streak = 0
                return work
            if s.watch_board:
                block = self._try_claim()
                if block is not None:
                    s.idle_hook_streak = 0
                    return [block]
            if idle_hook:
                idle_hook = False
                forced = self._idle_hook()
                if forced is not None:
                    return forced
            idle_deadline = self._wait(gen, stamps, idle_deadline)

    def _resume_interrupted(self) -> None:
        """Once, at the first idle check: a task this teammate still holds (a restart, a
        resumed session) becomes one turn that says it was interrupted, with task and token."""
        if not self.state.resume_held:
            return
        self.state.resume_held = False
        try:
            held = self._tracking.held()
        except (StorageError, CorruptFile):
            return
        if held is not None and self._tracking.hold_reason(None) is None:
            self.state.injections.append(resumed_task_block(held))

    def _try_claim(self) -> str | None:
        """Step (3): claim the next ready task, or record why there is none."""
        set_status = self._tracking.set_status
        held = self._tracking.held()
        hold = self._tracking.hold_reason(held)
        if hold is not None:
            set_status(hold[0], held.id if held else None, hold[1])
            return None
        with self._claims.attempt() as allowed:
            if not allowed:  # the team is closing: a released task stays released
                set_status("idle", None, CLOSING)
                return None
            try:
                res = self._board.claim_next(self.name, role=self.state.role,
                                             detail="auto-claimed")
            except StorageError as exc:  # a full or read-only disk: wait for a board change
                set_status("idle", None, f"cannot claim: {exc}")
                return None
        if res.task is None:
            set_status("idle", None, res.reason)
            return None
        task = res.task
        set_status("working", task.id, "")
        return auto_claim_block(task) + self._prepare(task, self.name)

    def _wait(self, gen: int, stamps: tuple, idle_deadline: float | None) -> float | None:
        """Step (4): block until the inbox (or, while watched, the board) changes."""
        board0, inbox0 = stamps
        self.state.idle_stamps = (board0, inbox0, self.state.watch_board)
        self._on_state()
        try:
            while True:
                wait_s = self._recheck()
                if idle_deadline is not None:
                    left = idle_deadline - time.monotonic()
                    if left <= 0:
                        self._notify_idle()
                        idle_deadline = None
                        self.state.idle_stamps = (board0, inbox0, self.state.watch_board)
                        self._on_state()
                    else:
                        wait_s = min(wait_s, left)
                self._changes.wait(gen, wait_s)
                gen = self._changes.generation
                if self._mail.stamp(self.name) != inbox0:
                    self.state.watch_board = True
                    return idle_deadline
                if self.state.watch_board and self._board.stamp() != board0:
                    return idle_deadline
                if self.state.plan_memory.expiry_due(self._protocols):
                    return idle_deadline  # tell it to submit its plan again
        finally:
            self.state.idle_stamps = None

    def _notify_idle(self) -> None:
        """One idle_notification per idle period; then only a message wakes the teammate."""
        self.state.watch_board = False
        reason = self.state.idle_reason
        content = f"{self.name} is idle: {reason}" if reason else f"{self.name} is idle"
        self._mail.send(self.name, LEAD, content, type="idle_notification")
        self._events.emit(
            MessageEvent(agent=self.name, to=LEAD, msg_type="idle_notification", preview=content)
        )
