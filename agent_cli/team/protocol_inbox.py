"""How a teammate takes in its inbox: protocol messages answered by the host, the rest held.

Step (1) of the idle check, and the pre-call hook before every model call, sort what arrived:
a shutdown_request is resolved as accepted in the protocol store (a shutdown always wins over
new work; the first valid one of a batch counts); a plan_approval_response is checked against
the stored request and becomes a `<plan-review>` block for the next model call; a
shutdown_response or plan_approval_request is not for a teammate and is ignored with a
warning; every other message is held for the next turn. A shutdown request that expired
before the teammate could answer it is reported to its sender (Endings), unless a fresh one
in the same batch was accepted; the accepted one waits in the state's `shutdown_msg`. A plan
request that expired unreviewed is told to the model once, so it submits again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import CorruptFile, UserError
from ..framing import plan_review_block
from . import plans
from .protocol import RequestExpired

if TYPE_CHECKING:
    from .endings import Endings
    from .intake import Intake
    from .mailbox import MailMessage
    from .protocol import ProtocolRequest, ProtocolStore
    from .teammate_state import TeammateState
    from .tracking import Tracking


class ProtocolInbox:
    """How one teammate sorts its inbox (see the module docstring)."""

    def __init__(
        self,
        state: TeammateState,
        tracking: Tracking,
        endings: Endings,
        intake: Intake,
        protocols: ProtocolStore,
    ) -> None:
        self.state = state
        self.name = state.name
        self._warn = tracking.warn
        self._endings = endings
        self._intake = intake
        self._protocols = protocols

    def sort(self) -> bool:
        """Handle protocol messages, hold ordinary ones; True when a shutdown was accepted."""
        accepted = False
        expired: list[tuple[MailMessage, ProtocolRequest]] = []
        for msg in self._intake.poll():
            if msg.type == "shutdown_request":
                if not accepted and self._accept_shutdown(msg, expired):
                    accepted = True
            elif msg.type == "plan_approval_response":
                self._take_plan_answer(msg)
            elif msg.type in ("shutdown_response", "plan_approval_request"):
                self._warn(
                    f"{self.name} ignored a {msg.type} from {msg.sender}: not for a teammate"
                )
            else:
                self._intake.hold(msg)
        for msg, req in expired if not accepted else ():  # moot once a fresh one was accepted
            self._endings.report_expired_shutdown(msg, req)
        return accepted

    def _accept_shutdown(
        self, msg: MailMessage, expired: list[tuple[MailMessage, ProtocolRequest]]
    ) -> bool:
        """Resolve the request as accepted; one that expired unanswered goes to `expired`."""
        try:
            req = self._protocols.resolve(
                msg.request_id,
                "shutdown",
                self.name,
                msg.sender,
                True,
                resolution="shutting down",
                response_id=msg.id,
            )
        except RequestExpired as exc:
            expired.append((msg, exc.request))
            return False
        except (UserError, CorruptFile) as exc:
            self._warn(f"{self.name} ignored a shutdown_request from {msg.sender}: {exc}")
            return False
        if req.resolved_at is not None and req.resolved_at < self.state.born_at:
            return False  # redelivered after a restart: an earlier run already shut down for it
        self.state.shutdown_msg = msg
        return True

    def _take_plan_answer(self, msg: MailMessage) -> None:
        why = plans.check_response(self._protocols, self.name, msg)
        if why is None:
            try:
                req = self._protocols.get(msg.request_id)
            except (UserError, CorruptFile) as exc:  # changed since the check
                why = plans.unreadable(exc) if isinstance(exc, CorruptFile) else str(exc)
        if why is not None:
            self._warn(f"{self.name} rejected a plan_approval_response from {msg.sender}: {why}")
            return
        self.state.plan_memory.note(req)
        approved = req.status == "approved"
        self.state.injections.append(plan_review_block(req.id, approved, req.resolution or ""))
        self._intake.deliver([msg.id])

    def note_plan_expiry(self) -> None:
        """Once per plan: tell the model its plan request expired unreviewed (fail closed)."""
        notice = self.state.plan_memory.expiry_notice(self._protocols, self.name)
        if notice is not None:
            self.state.injections.append(notice)
            self._warn(f"{self.name}'s plan request expired before review; asked to resubmit")
