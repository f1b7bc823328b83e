"""Approvals that cross hosts: a teammate on another machine asks the lead's human.

`RemoteBroker` stands where the in-process ApprovalBroker stands in a teammate process on
another host (the PermissionGate calls its `ask()` and `ui_attached`): `ask()` puts the
question in the database (approval_queue.py) with a NOTIFY and waits for the answer row,
heartbeating its row on the database clock, honouring its cancel event. With no lead attached
it waits, and says so through `on_status` ("alice is waiting for the lead to approve ..."); it
never allows anything by itself. The lead's side is `ApprovalBridge` (approval_bridge.py).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from ..errors import StorageError
from ..permissions.broker import POLL_S, ApprovalAnswer, ApprovalRequest
from ..safetext import visible
from .approval_bridge import ApprovalBridge
from .approval_queue import APPROVALS, ApprovalQueue, unsendable, what
from .approval_wake import Waker
from .db import Database

__all__ = ["APPROVALS", "ApprovalBridge", "RemoteBroker"]

HEARTBEAT_S = 2.0  # how often a waiting asker stamps its row (and re-reads it)
FRESH_S = 15.0  # a lead whose heartbeat is older than this is not attached
INTERRUPTED = ApprovalAnswer("deny", source="interrupted")
CLOSED = ApprovalAnswer("deny", source="closed")


@dataclass(eq=False)
class _Asking:
    request: ApprovalRequest
    key: str = field(default_factory=lambda: uuid.uuid4().hex)
    status: str = ""


class RemoteBroker:
    """The approval broker of a teammate on another host: the lead's human answers."""

    def __init__(self, db: Database, host: str, *, heartbeat_s: float = HEARTBEAT_S,
                 fresh_s: float = FRESH_S,
                 on_status: Callable[[str], None] | None = None) -> None:
        self.db = db
        self.host = host
        self.heartbeat_s = heartbeat_s
        self.fresh_s = fresh_s
        self.on_status = on_status
        self.queue = ApprovalQueue(db)
        self._lock = threading.Lock()
        self._asking: list[_Asking] = []
        self._waker: Waker | None = None
        self._closed = threading.Event()

    # ----- what the gate and the teammate's terminal read ----------------------------------
    @property
    def ui_attached(self) -> bool:
        """A lead is attached (its heartbeat is fresh on the database clock)."""
        try:
            return self.queue.lead_present(self.fresh_s)
        except StorageError:
            return False

    def pending(self) -> list[ApprovalRequest]:
        """The questions this process is waiting on, oldest first."""
        with self._lock:
            return [a.request for a in self._asking]

    def status(self) -> str:
        """One line per waiting question ("" when none)."""
        with self._lock:
            return "\n".join(a.status for a in self._asking if a.status)

    # ----- asking --------------------------------------------------------------------------
    def ask(self, req: ApprovalRequest, cancel: threading.Event | None = None) -> ApprovalAnswer:
        """Send `req` to the lead and block until answered, cancelled or closed."""
        why = unsendable(req)
        if why:
            return ApprovalAnswer("deny", feedback=f"Not asked: {why}.", source="refused")
        asking = _Asking(req)
        with self._lock:
            if self._closed.is_set():
                return CLOSED
            self._asking.append(asking)
        try:
            return self._wait(asking, cancel)
        finally:
            with self._lock:
                self._asking.remove(asking)
            self._say(asking, "")

    def _wait(self, asking: _Asking, cancel: threading.Event | None) -> ApprovalAnswer:
        waker = self._wake()
        seen, due, sent = -1, 0.0, False
        while True:
            if cancel is not None and cancel.is_set():
                return self._give_up(asking, "cancelled by the asker", INTERRUPTED)
            if self._closed.is_set():
                return self._give_up(asking, "the asker closed", CLOSED)
            gen, now = waker.generation(), time.monotonic()
            if gen != seen or now >= due:
                beat = now >= due  # a wake-up only reads: a lead may be claiming the row
                seen = gen
                if beat:
                    due = now + self.heartbeat_s
                try:
                    if sent:
                        answer = self._look(asking, beat)
                    else:  # no heartbeat yet: the row is fresh, and a lead claiming it
                        # now must not find it locked by us (SKIP LOCKED would pass it by)
                        self.queue.insert(asking.key, self.host, asking.request)
                        sent, answer = True, None
                        self._show(asking, self.queue.lead_present(self.fresh_s))
                except StorageError:
                    self._say(asking, f"{self._waiting(asking)} (the database is unreachable; "
                                      "retrying)")
                    answer = None
                    due = time.monotonic() + min(self.heartbeat_s, 1.0)
                if answer == "resend":
                    sent, due = False, 0.0
                elif answer is not None:
                    return answer
            waker.wait(seen, POLL_S)

    def _look(self, asking: _Asking, beat: bool) -> ApprovalAnswer | str | None:
        """Read (and with `beat` stamp) the row: the answer, "resend" when the row is
        gone, else None."""
        seen = self.queue.touch(asking.key, self.fresh_s, beat)
        if seen is None:
            return "resend"
        if seen.answer is not None:
            return seen.answer
        if seen.state == "withdrawn":  # we were cut off long enough to look dead: ask again
            self.queue.revive(asking.key)
        self._show(asking, seen.lead_present)
        return None

    def _show(self, asking: _Asking, lead_present: bool) -> None:
        line = self._waiting(asking)
        if not lead_present:
            line += " (no lead is attached to the team; nothing runs until one answers)"
        self._say(asking, line)

    def _give_up(self, asking: _Asking, why: str, answer: ApprovalAnswer) -> ApprovalAnswer:
        try:
            self.queue.withdraw(asking.key, why)
        except StorageError:
            pass  # unreachable: the lead's bridge withdraws it once our heartbeat is stale
        return answer

    def _waiting(self, asking: _Asking) -> str:
        req = asking.request
        return (f"{visible(req.agent, one_line=True)} is waiting for the lead to approve: "
                f"{what(req)}")

    def _say(self, asking: _Asking, line: str) -> None:
        if line == asking.status:
            return
        asking.status = line
        if self.on_status is not None:
            try:
                self.on_status(line)
            except Exception:  # noqa: BLE001 - a broken printer must not lose the answer
                pass

    def _wake(self) -> Waker:
        with self._lock:
            if self._waker is None:
                self._waker = Waker(self.db, self.queue.channel).start()
            return self._waker

    def close(self) -> None:
        """No more questions: every waiting one is withdrawn and denied ("closed")."""
        self._closed.set()
        with self._lock:
            waker = self._waker
        if waker is not None:
            waker.bump()
            deadline = time.monotonic() + 10
            while self.pending() and time.monotonic() < deadline:
                waker.wait(waker.generation(), POLL_S)
            waker.close()

    detach_ui = close  # what a session's end calls on an ApprovalBroker
