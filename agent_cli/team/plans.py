"""The plan-approval protocol and the plan gate it drives.

A teammate's effectful tools are refused (before their handlers run) while its latest plan
is pending or rejected, or while it must plan first (require_plan) and has no approved plan
yet. The protocol store is the source of truth: a forged or stray response message cannot
open the gate, only a resolved request can. One exception keeps the gate closed: when the
store lost a plan its teammate remembers submitting (an unreadable requests.json is set aside
and the store starts empty), the teammate's last known state of that plan decides.

A plan the lead did not review before its request expired can no longer be approved: the
gate stays closed (fail closed) with a reason that says so, review_plan refuses it naming the
expiry, and the teammate is told once (PlanMemory.expiry_notice) to submit_plan again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import CorruptFile, Refused
from ..events import MessageEvent
from ..framing import plan_announcement
from .protocol import RequestExpired, short_id

if TYPE_CHECKING:
    from ..runtime import Runtime
    from .protocol import ProtocolRequest, ProtocolStore

ALLOWED = "only read tools, send_message and submit_plan are allowed"
PENDING = f"plan approval pending: {ALLOWED}"
REJECTED = f"plan rejected by the lead: revise it and submit_plan again; {ALLOWED}"
REQUIRED = f"plan approval required: call submit_plan first; {ALLOWED}"
EXPIRED = (
    "your plan request {id} expired before the lead reviewed it: call submit_plan again; "
    f"{ALLOWED}"
)
EXPIRED_REASON = "plan request expired before review: submit_plan again"
LOST = (
    "your plan request {id} is no longer on record (.team/requests.json was unreadable and "
    f"set aside): call submit_plan again; {ALLOWED}"
)


def unreadable(exc: CorruptFile) -> str:
    """The one line a teammate shows while requests.json cannot be read."""
    return f"cannot read .team/requests.json: {exc.detail}"


def effective_plan(
    latest: ProtocolRequest | None, known: ProtocolRequest | None
) -> tuple[ProtocolRequest | None, bool]:
    """The plan that decides, and whether it is `known` because the store lost it.

    `latest` is the store's newest plan of a teammate, `known` the newest one the teammate
    itself saw (submitted or was answered about). Timestamps have a fixed format, so they
    compare as text.
    """
    if known is None or (latest is not None and latest.created_at >= known.created_at):
        return latest, False
    return known, True


def lost_block(known: ProtocolRequest) -> str | None:
    """The refusal for a plan the store lost: open only if it was approved."""
    return None if known.status == "approved" else LOST.format(id=known.id[:8])


class PlanMemory:
    """A teammate's newest plan request as it last saw it (submitted, answered or read).

    Used only when the store no longer has that request: then its remembered status keeps
    the gate closed (pending or rejected) until the teammate submits a new plan.
    """

    def __init__(self) -> None:
        self.known: ProtocolRequest | None = None
        self._told_expired: set[str] = set()  # plan ids the teammate was told expired

    def note(self, req: ProtocolRequest) -> None:
        if self.known is None or req.created_at >= self.known.created_at:
            self.known = req

    def state(self, protocols: ProtocolStore, name: str) -> tuple[ProtocolRequest | None, bool]:
        """(the plan that decides, whether the store lost it); CorruptFile if unreadable."""
        latest, lost = effective_plan(protocols.latest_plan(name), self.known)
        if latest is not None and not lost:
            self.note(latest)
        return latest, lost

    def expiry_due(self, protocols: ProtocolStore) -> bool:
        """Cheap (no disk read): the remembered plan is pending, expired and not yet told."""
        known = self.known
        return (
            known is not None
            and known.id not in self._told_expired
            and protocols.has_expired(known)
        )

    def expiry_notice(self, protocols: ProtocolStore, name: str) -> str | None:
        """Once per plan: the text telling the teammate its newest plan expired unreviewed
        (the store decides; None when it is not, or cannot be read)."""
        if not self.expiry_due(protocols):
            return None
        self._told_expired.add(self.known.id)  # decided once, whatever the store says now
        try:
            latest, lost = self.state(protocols, name)
        except CorruptFile:
            return None  # the idle check reports the unreadable file
        if latest is None or lost or not protocols.has_expired(latest):
            return None
        self._told_expired.add(latest.id)
        return expired_block(latest)

    def lost_block(self, protocols: ProtocolStore, name: str) -> str | None:
        """The refusal for a remembered plan the store lost; None when the store decides."""
        if self.known is None:
            return None
        try:
            latest, lost = self.state(protocols, name)
        except CorruptFile:
            return None  # the shared gate reads the same file and fails closed
        return lost_block(latest) if lost else None


def plan_block(
    protocols: ProtocolStore,
    name: str,
    require_plan: bool,
    known: ProtocolRequest | None = None,
) -> str | None:
    """Why `name`'s effectful tools are refused right now, or None when they are not.

    CorruptFile when requests.json cannot be read (callers fail closed).
    """
    latest, lost = effective_plan(protocols.latest_plan(name), known)
    if lost:
        return lost_block(latest)
    if latest is None:
        return REQUIRED if require_plan else None
    if latest.status == "pending":
        return EXPIRED.format(id=latest.id[:8]) if protocols.has_expired(latest) else PENDING
    if latest.status == "rejected":
        return REJECTED
    return None


def expired_block(req: ProtocolRequest) -> str:
    """What a teammate sees when its plan request expired before the lead reviewed it."""
    return (
        f'<plan-review request_id="{req.id}" status="expired">Your plan request expired at '
        f"{req.expires_at} before the lead reviewed it, so it can no longer be approved. "
        "Effectful tools stay blocked: call submit_plan again (the same plan is fine)."
        "</plan-review>"
    )


def submit_plan(runtime: Runtime, name: str, plan: str) -> ProtocolRequest:
    """Store a pending plan_approval request naming the task `name` holds, then send it to
    the lead (in that order)."""
    from ..names import LEAD
    from .task_plans import held_task

    task = held_task(runtime, name)
    req = runtime.protocols.create("plan_approval", name, LEAD, content=plan, task=task)
    summary = plan.strip().splitlines()[0][:120] if plan.strip() else ""
    runtime.mail.send(
        name,
        LEAD,
        plan_announcement(req.id, task[0] if task else None, summary),
        type="plan_approval_request",
        request_id=req.id,
        plan=plan,
    )
    runtime.events.emit(
        MessageEvent(agent=name, to=LEAD, msg_type="plan_approval_request", preview=summary)
    )
    return req


def review_plan(
    runtime: Runtime, reviewer: str, request_id: str, approve: bool, feedback: str = ""
) -> ProtocolRequest:
    """Resolve a plan request (the store checks every field), then answer the teammate."""
    req = runtime.protocols.get(request_id)
    if req.kind != "plan_approval":
        raise Refused(f"request {request_id} is a {req.kind} request, not a plan")
    try:
        resolved = runtime.protocols.resolve(
            request_id, "plan_approval", reviewer, req.sender, approve, resolution=feedback
        )
    except RequestExpired:
        raise Refused(
            f"plan request {short_id(req.id)} from {req.sender} expired at {req.expires_at} "
            f"before it was reviewed; {req.sender} must submit_plan again (it is told so) and "
            "you review the new request"
        ) from None
    verdict = "approved" if approve else "rejected"
    for_task = f" for task #{req.task_id}" if req.task_id is not None else ""
    content = f"plan{for_task} {verdict}" + (f": {feedback}" if feedback else "")
    runtime.mail.send(
        reviewer,
        req.sender,
        content,
        type="plan_approval_response",
        request_id=request_id,
        approve=approve,
    )
    runtime.events.emit(
        MessageEvent(
            agent=reviewer, to=req.sender, msg_type="plan_approval_response", preview=content
        )
    )
    return resolved


def check_response(protocols: ProtocolStore, me: str, msg) -> str | None:
    """Why a received plan_approval_response does not match its request (None = it does)."""
    from ..errors import NotFound

    if not msg.request_id:
        return "no request_id"
    try:
        req = protocols.get(msg.request_id)
    except NotFound:
        return f"no request {msg.request_id}"
    except CorruptFile as exc:
        return unreadable(exc)
    if req.kind != "plan_approval":
        return f"request {req.id} is a {req.kind} request"
    if req.sender != me or req.target != msg.sender:
        return f"request {req.id} is between {req.sender} and {req.target}, not {msg.sender}"
    if req.status == "pending":
        return f"request {req.id} was never resolved"
    if msg.approve is not None and msg.approve != (req.status == "approved"):
        return f"request {req.id} is {req.status}, the message says otherwise"
    return None
