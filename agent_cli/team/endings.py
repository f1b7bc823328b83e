"""How a teammate's run ends: shut down on request, or fail; and the hold report.

Endings is a collaborator of Teammate (it uses Tracking for status, the held task and
warnings). Every way out leaves the shared state clean for a later respawn of the same name:
its task released to pending, the lead told, the shutdown requests still pending for it
resolved (it is already down: an old request must not stop the next incarnation), and its
inbox acknowledged past what it took in. A shutdown request that expired before the teammate
could answer it does not end the run: the teammate tells the sender and keeps going.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import AgentCliError
from ..events import MessageEvent, Notice
from ..names import LEAD
from ..shorten import shorten
from .mailbox import PROTOCOL_TYPES
from .protocol import short_id

if TYPE_CHECKING:
    from ..board.models import Task
    from ..board.store import TaskBoard
    from ..events import EventBus
    from .intake import Intake
    from .mailbox import Mailbox, MailMessage
    from .protocol import ProtocolRequest, ProtocolStore
    from .teammate_state import TeammateState
    from .tracking import Tracking


class Endings:
    """The endings of one teammate (see the module docstring)."""

    def __init__(
        self,
        state: TeammateState,
        tracking: Tracking,
        intake: Intake,
        board: TaskBoard,
        mail: Mailbox,
        protocols: ProtocolStore,
        events: EventBus,
    ) -> None:
        self.name = state.name
        self._tracking = tracking
        self._intake = intake
        self._board = board
        self._mail = mail
        self._protocols = protocols
        self._events = events

    def _release_held(self, reason: str) -> Task | None:
        held = self._tracking.held()
        if held is None:
            return None
        return self._board.release(held.id, self.name, reason=reason)

    def shut_down(self, msg: MailMessage) -> None:
        released = self._release_held("shutdown")
        note = f"; task #{released.id} released to pending" if released else ""
        self._mail.send(
            self.name,
            msg.sender,
            f"{self.name} shut down{note}",
            type="shutdown_response",
            request_id=msg.request_id,
            approve=True,
        )
        self._events.emit(
            MessageEvent(
                agent=self.name, to=msg.sender, msg_type="shutdown_response", preview="shut down"
            )
        )
        self._intake.ack()
        self._close_shutdown_requests("already shut down", skip=msg.request_id)
        self._tracking.set_status("shutdown", None, "")

    def fail(self, reason: str) -> None:
        """Release the task, tell the lead, show failed. Each step is tried on its own."""
        note = ""
        try:
            released = self._release_held(f"{self.name} failed")
            if released is not None:
                note = f"; task #{released.id} released to pending"
        except (AgentCliError, OSError) as exc:
            note = f"; could not release its task: {exc}"
        content = f"{self.name} failed: {reason}{note}"
        try:
            self._mail.send(self.name, LEAD, content, type="error")
            self._events.emit(
                MessageEvent(agent=self.name, to=LEAD, msg_type="error", preview=content)
            )
        except (AgentCliError, OSError) as exc:
            self._tracking.warn(f"{content} (and the lead could not be told: {exc})")
        self._close_shutdown_requests(f"already down: {self.name} failed")
        self._settle_inbox()
        self._tracking.set_status("failed", None, shorten(reason, 200))

    def _close_shutdown_requests(self, resolution: str, skip: str | None = None) -> None:
        """Resolve the shutdown requests still pending for this teammate: it is down, and a
        later respawn must not take an old request as meant for it (it is refused then)."""
        try:
            self._protocols.close_pending("shutdown", self.name, resolution, skip=skip)
        except (AgentCliError, OSError) as exc:
            self._tracking.warn(f"{self.name} could not close its shutdown requests: {exc}")

    def _settle_inbox(self) -> None:
        """On failure: take in what arrived, acknowledge it unless an ordinary message still
        waits for a turn (then a respawn gets it again; the protocol messages it meets then
        are already resolved and ignored)."""
        try:
            for msg in self._intake.poll():
                if msg.type not in PROTOCOL_TYPES:
                    self._intake.hold(msg)
            self._intake.ack()
        except (AgentCliError, OSError) as exc:
            self._tracking.warn(f"{self.name} could not acknowledge its inbox: {exc}")

    def report_hold(self, held: Task, why: str) -> None:
        content = (
            f"I hold task #{held.id} ({held.subject}) but could not finish it: "
            f"{why}. It stays in_progress with me; message me to continue "
            "or release it."
        )
        self._tell_lead(content, f"{self.name} could not tell the lead it holds #{held.id}")

    def report_stall(self, report: str) -> None:
        """The host's report once the reminders for a held task are used up (stall.py)."""
        self._tracking.warn(report)
        self._tell_lead(report, f"{self.name} could not report its stalled task")

    def note_reminder(self, held: Task, why: str) -> None:
        self._events.emit(Notice(
            agent=self.name,
            level="warning",
            text=f"reminded to finish #{held.id} {held.subject!r}: it {why} without "
            "complete_task",
            data={"kind": "reminder", "task_id": held.id},
        ))

    def _tell_lead(self, content: str, failed: str) -> None:
        try:
            self._mail.send(self.name, LEAD, content, type="message")
        except AgentCliError as exc:  # a full disk must not fail the teammate over a report
            self._tracking.warn(f"{failed}: {exc}")
            return
        self._events.emit(
            MessageEvent(agent=self.name, to=LEAD, msg_type="message", preview=content[:120])
        )

    def report_expired_shutdown(self, msg: MailMessage, req: ProtocolRequest) -> None:
        """A shutdown request that expired before this teammate could answer it (it was
        busy, e.g. waiting for a human): it cannot be accepted any more, so the teammate keeps
        running and says so; the sender may ask again (a fresh request)."""
        content = (
            f"{self.name} did not shut down: your shutdown request {short_id(req.id)} expired "
            f"at {req.expires_at} before {self.name} could answer it. {self.name} is still "
            "running; call request_shutdown again if it should stop."
        )
        self._tracking.warn(
            f"shutdown request to {self.name} expired before it could answer; "
            f"{self.name} keeps running (ask again to stop it)"
        )
        try:
            self._mail.send(self.name, msg.sender, content, type="message")
        except (AgentCliError, OSError) as exc:
            self._tracking.warn(f"{self.name} could not tell {msg.sender}: {exc}")
            return
        self._events.emit(
            MessageEvent(agent=self.name, to=msg.sender, msg_type="message", preview=content[:120])
        )
