"""How a teammate's run ends: shut down on request, or fail; and the hold report.

Endings is a layer of Teammate (over Tracking: status, held task, warnings). Every way
out leaves the shared state clean for a later respawn of the same name: its task released to
pending, the lead told, the shutdown requests still pending for it resolved (it is already
down: an old request must not stop the next incarnation), and its inbox acknowledged past
what it took in. A shutdown request that expired before the teammate could answer it does
not end the run: the teammate tells the sender and keeps going.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import AgentCliError
from ..events import MessageEvent, Notice
from ..names import LEAD
from .mailbox import PROTOCOL_TYPES
from .protocol import short_id
from .tracking import Tracking

if TYPE_CHECKING:
    from ..board.models import Task
    from .intake import Intake
    from .mailbox import MailMessage
    from .protocol import ProtocolRequest


class Endings(Tracking):
    """The endings of a Teammate (see the module docstring)."""

    intake: Intake

    def _release_held(self, reason: str) -> Task | None:
        held = self._held()
        if held is None:
            return None
        return self.rt.board.release(held.id, self.name, reason=reason)

    def _shut_down(self, msg: MailMessage) -> None:
        released = self._release_held("shutdown")
        note = f"; task #{released.id} released to pending" if released else ""
        self.rt.mail.send(
            self.name,
            msg.sender,
            f"{self.name} shut down{note}",
            type="shutdown_response",
            request_id=msg.request_id,
            approve=True,
        )
        self.rt.events.emit(
            MessageEvent(
                agent=self.name, to=msg.sender, msg_type="shutdown_response", preview="shut down"
            )
        )
        self.intake.ack()
        self._close_shutdown_requests("already shut down", skip=msg.request_id)
        self._set_status("shutdown", None, "")

    def _fail(self, reason: str) -> None:
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
            self.rt.mail.send(self.name, LEAD, content, type="error")
            self.rt.events.emit(
                MessageEvent(agent=self.name, to=LEAD, msg_type="error", preview=content)
            )
        except (AgentCliError, OSError) as exc:
            self._warn(f"{content} (and the lead could not be told: {exc})")
        self._close_shutdown_requests(f"already down: {self.name} failed")
        self._settle_inbox()
        self._set_status("failed", None, reason[:200])

    def _close_shutdown_requests(self, resolution: str, skip: str | None = None) -> None:
        """Resolve the shutdown requests still pending for this teammate: it is down, and a
        later respawn must not take an old request as meant for it (it is refused then)."""
        try:
            self.rt.protocols.close_pending("shutdown", self.name, resolution, skip=skip)
        except (AgentCliError, OSError) as exc:
            self._warn(f"{self.name} could not close its shutdown requests: {exc}")

    def _settle_inbox(self) -> None:
        """On failure: take in what arrived, acknowledge it unless an ordinary message still
        waits for a turn (then a respawn gets it again; the protocol messages it meets then
        are already resolved and ignored)."""
        try:
            for msg in self.intake.poll():
                if msg.type not in PROTOCOL_TYPES:
                    self.intake.hold(msg)
            self.intake.ack()
        except (AgentCliError, OSError) as exc:
            self._warn(f"{self.name} could not acknowledge its inbox: {exc}")

    def _report_hold(self, held: Task, why: str) -> None:
        content = (
            f"I hold task #{held.id} ({held.subject}) but could not finish it: "
            f"{why}. It stays in_progress with me; message me to continue "
            "or release it."
        )
        self._tell_lead(content, f"{self.name} could not tell the lead it holds #{held.id}")

    def _report_stall(self, report: str) -> None:
        """The host's report once the reminders for a held task are used up (stall.py)."""
        self._warn(report)
        self._tell_lead(report, f"{self.name} could not report its stalled task")

    def _note_reminder(self, held: Task, why: str) -> None:
        self.rt.events.emit(Notice(
            agent=self.name,
            level="warning",
            text=f"reminded to finish #{held.id} {held.subject!r}: it {why} without "
            "complete_task",
            data={"kind": "reminder", "task_id": held.id},
        ))

    def _tell_lead(self, content: str, failed: str) -> None:
        try:
            self.rt.mail.send(self.name, LEAD, content, type="message")
        except AgentCliError as exc:  # a full disk must not fail the teammate over a report
            self._warn(f"{failed}: {exc}")
            return
        self.rt.events.emit(
            MessageEvent(agent=self.name, to=LEAD, msg_type="message", preview=content[:120])
        )

    def _report_expired_shutdown(self, msg: MailMessage, req: ProtocolRequest) -> None:
        """A shutdown request that expired before this teammate could answer it (it was
        busy, e.g. waiting for a human): it cannot be accepted any more, so the teammate keeps
        running and says so; the sender may ask again (a fresh request)."""
        content = (
            f"{self.name} did not shut down: your shutdown request {short_id(req.id)} expired "
            f"at {req.expires_at} before {self.name} could answer it. {self.name} is still "
            "running; call request_shutdown again if it should stop."
        )
        self._warn(
            f"shutdown request to {self.name} expired before it could answer; "
            f"{self.name} keeps running (ask again to stop it)"
        )
        try:
            self.rt.mail.send(self.name, msg.sender, content, type="message")
        except (AgentCliError, OSError) as exc:
            self._warn(f"{self.name} could not tell {msg.sender}: {exc}")
            return
        self.rt.events.emit(
            MessageEvent(agent=self.name, to=msg.sender, msg_type="message", preview=content[:120])
        )
