"""The approval broker: the one place where any thread asks the human, one request at a time.

Any thread (the lead's worker, a teammate) calls `ask()`, which queues the request FIFO and
blocks that thread until the UI thread answers it, or its cancel event is set (denied as
"interrupted"). The UI attaches with `attach_ui(on_request)`; the callback runs on the asking
thread when a request is queued, so the UI can wake up. The UI takes requests with
`next_request()`: it is handed the same unanswered request until it answers, so requests
are shown strictly one at a time. With no UI attached (headless, tests), `ask()` denies at
once. There is no tool that answers a request: only the UI thread can.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

AnswerKind = Literal["allow_once", "allow_always", "deny"]
POLL_S = 0.05  # how often a blocked asker re-checks its cancel event


@dataclass
class ApprovalRequest:
    agent: str
    tool: str
    input: dict[str, Any]
    summary: str = ""  # the command or the path
    preview: str = ""  # the command, or a unified diff
    purpose: str = ""  # why ("task #3 verify"), when the caller knows
    suggested_rule: str = ""  # what "allow always" adds; "" = only "allow once" makes sense
    reason: str = ""  # why it asks although a rule named the command ("asks because ...")
    host: str = ""  # the asker's host when it runs on another machine (pg/approvals.py)
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])


@dataclass(frozen=True)
class ApprovalAnswer:
    decision: AnswerKind
    feedback: str = ""
    save: bool = False  # with allow_always: also write the rule to settings.json
    source: str = "human"  # "human", "headless", "interrupted", "closed"

    @property
    def allowed(self) -> bool:
        return self.decision != "deny"


HEADLESS = ApprovalAnswer("deny", source="headless")
CLOSED = ApprovalAnswer("deny", source="closed")


@dataclass(eq=False)
class _Slot:
    request: ApprovalRequest
    done: threading.Event = field(default_factory=threading.Event)
    answer: ApprovalAnswer | None = None


class ApprovalBroker:
    """Thread-safe FIFO of approval requests between asking threads and the UI thread."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._queue: deque[_Slot] = deque()
        self._current: _Slot | None = None
        self._on_request: Callable[[], None] | None = None
        self._ui_closed = False  # a UI was attached and has gone: the session is ending

    # ----- UI side ------------------------------------------------------------------------
    def attach_ui(self, on_request: Callable[[], None] | None = None) -> None:
        with self._cond:
            self._on_request = on_request or (lambda: None)
            self._ui_closed = False

    def detach_ui(self) -> None:
        """No human any more: every waiting request is denied."""
        with self._cond:
            self._on_request = None
            self._ui_closed = True
            slots = list(self._queue)
            if self._current is not None:
                slots.append(self._current)
            self._queue.clear()
            self._current = None
            for slot in slots:
                self._settle(slot, ApprovalAnswer("deny", source="closed"))
            self._cond.notify_all()

    @property
    def ui_attached(self) -> bool:
        with self._cond:
            return self._on_request is not None

    def next_request(self, timeout: float) -> ApprovalRequest | None:
        """The request to show now (the same one until it is answered), or None on timeout."""
        deadline = time.monotonic() + max(timeout, 0.0)
        with self._cond:
            while True:
                if self._current is None and self._queue:
                    self._current = self._queue.popleft()
                if self._current is not None:
                    return self._current.request
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._cond.wait(left)

    def answer(self, request_id: str, answer: ApprovalAnswer) -> bool:
        """Answer a request; False if it is no longer waiting (cancelled or answered)."""
        with self._cond:
            slots = ([self._current] if self._current else []) + list(self._queue)
            slot = next((s for s in slots if s.request.id == request_id), None)
            if slot is None:
                return False
            if slot is self._current:
                self._current = None
            else:
                self._queue.remove(slot)
            self._settle(slot, answer)
            self._cond.notify_all()
            return True

    def pending(self) -> list[ApprovalRequest]:
        """Requests waiting (the one being shown first)."""
        with self._cond:
            slots = ([self._current] if self._current else []) + list(self._queue)
            return [s.request for s in slots]

    # ----- asking side --------------------------------------------------------------------
    def ask(self, req: ApprovalRequest, cancel: threading.Event | None = None) -> ApprovalAnswer:
        """Queue `req` and block until answered; deny at once when no UI is attached."""
        slot = _Slot(req)
        with self._cond:
            callback = self._on_request
            if callback is None:
                return CLOSED if self._ui_closed else HEADLESS
            self._queue.append(slot)
            self._cond.notify_all()
        try:
            callback()
        except Exception:  # a broken UI hook must not leave the asker hanging unseen
            pass
        while not slot.done.wait(POLL_S):
            if cancel is not None and cancel.is_set():
                self._withdraw(slot)
                break
        assert slot.answer is not None
        return slot.answer

    def _withdraw(self, slot: _Slot) -> None:
        with self._cond:
            if slot.done.is_set():
                return
            if slot is self._current:
                self._current = None
            elif slot in self._queue:
                self._queue.remove(slot)
            self._settle(slot, ApprovalAnswer("deny", source="interrupted"))
            self._cond.notify_all()

    @staticmethod
    def _settle(slot: _Slot, answer: ApprovalAnswer) -> None:
        slot.answer = answer
        slot.done.set()
