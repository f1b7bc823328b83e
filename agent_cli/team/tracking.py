"""What a teammate tracks about itself: its status, its denials, and the gate that sees them.

Tracking writes the teammate's status to the roster (through Team.status) and as a
StatusEvent, only when it changed; remembers why a call of this turn was denied (so the
teammate can say why it holds an unfinished task: "holds #3: shell run was denied"); answers
whether its plan closes its effectful tools, and why it must not claim now (`hold_reason`).

TrackingGate is the shared permission gate as one teammate sees it: it reports the
teammate's denials, and refuses effectful tools while the teammate's plan is one the
protocol store lost (requests.json was unreadable and set aside) but the teammate remembers
as pending or rejected: the shared gate would find no plan there and open.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..errors import CorruptFile
from ..events import Notice, StatusEvent
from ..names import LEAD
from ..shorten import shorten
from . import plans, task_plans

MAX_DENIAL_CHARS = 600  # the reason a denial gave, whole unless it runs past this

if TYPE_CHECKING:
    from ..board.models import Task
    from ..board.store import TaskBoard
    from ..events import EventBus
    from .protocol import ProtocolStore
    from .status import StatusWriter
    from .teammate_state import TeammateState


class Tracking:
    """Status, denials and holds of one teammate."""

    def __init__(
        self,
        state: TeammateState,
        board: TaskBoard,
        protocols: ProtocolStore,
        events: EventBus,
        status: StatusWriter,
        on_state: Callable[[], None],
    ) -> None:
        self.state = state
        self._board = board
        self._protocols = protocols
        self._events = events
        self._status = status
        self._on_state = on_state  # Team.state_changed: wakes wait_quiet

    def note_denial(self, tool, decision) -> None:
        """Called by TrackingGate when a call of this teammate's was refused."""
        try:
            if decision.source == "plan" or self.plan_block() is not None:
                return  # the plan gate: the idle reason says "waiting for plan approval"
        except CorruptFile:
            return  # the idle check says the plan state cannot be read
        what = "shell run" if tool.name == "shell" else f"{tool.name}"
        denial = f"{what} was denied"
        why = (decision.message or "").strip().splitlines()
        if why:
            first = why[0].removeprefix("Denied: ").strip()
            denial += f" ({shorten(first, MAX_DENIAL_CHARS)})"
        self.state.denial = denial

    def note_plan_refusal(self, text: str) -> None:
        """Told to get a plan approved (the plan gate): not a stall."""
        self.state.stalls.plan_refusal = text

    def note_sent(self, to: str) -> None:
        """A teammate that told the lead itself gets no host report."""
        if to == LEAD and self.state.denial:
            self.state.reported = True
        if to == LEAD:
            self.state.stalls.note_told_lead()

    def lost_plan_block(self) -> str | None:
        """The refusal for a remembered plan the store lost, else None (the store decides)."""
        return self.state.plan_memory.lost_block(self._protocols, self.state.name)

    def plan_block(self) -> str | None:
        s = self.state
        return plans.plan_block(
            self._protocols, s.name, s.require_plan, known=s.plan_memory.known
        )

    def held(self) -> Task | None:
        return self._board.held_by(self.state.name)

    def hold_reason(self, held: Task | None) -> tuple[str, str] | None:
        """(status, idle reason) when the idle check must not claim now; None when it may."""
        s = self.state
        try:
            latest, lost = s.plan_memory.state(self._protocols, s.name)
        except CorruptFile as exc:  # fail closed: no claim while the plan state is unknown
            return "idle", plans.unreadable(exc)
        if not s.require_plan and task_plans.stale(latest, held):
            latest, lost = None, False  # a plan for a task it no longer holds decides nothing
        if lost and latest.status != "approved":
            return "idle", "plan request lost: submit_plan again"
        if latest is not None and self._protocols.has_expired(latest):
            return "idle", plans.EXPIRED_REASON
        if latest is not None and latest.status == "pending":
            return "waiting_plan", "waiting for plan approval"
        if latest is not None and latest.status == "rejected":
            return "idle", "plan rejected: waiting for a message"
        if held is not None:
            why = (
                s.stalls.hold_reason(held)
                or s.denial
                or s.stalls.blocker
                or s.stalls.plan_refusal
                or "waiting for a message (the task is not completed)"
            )
            return "idle", f"holds #{held.id}: {why}"
        return None

    def turn_reported(self) -> bool:
        """This turn said why its task is not done: a denial, a failed verify, a message to
        the lead, a plan-gate refusal, or a plan that keeps it from working (pending,
        rejected, lost, expired)."""
        stalls = self.state.stalls
        if self.state.denial or stalls.blocker or stalls.told_lead or stalls.plan_refusal:
            return True
        hold = self.hold_reason(self.held())
        return hold is not None and not hold[1].startswith("holds #")  # a plan state

    def set_status(self, status: str, task_id: int | None, reason: str) -> None:
        key = (status, task_id, reason)
        if key == self.state.status:
            return
        self.state.status = key
        ended = {"pid": None, "host": None} if status in ("shutdown", "failed") else {}
        # "working" is written while the model runs (the wake-up path); others before going on
        self._status.post(
            self.state.name,
            wait=status != "working",
            status=status,
            current_task=task_id,
            idle_reason=reason,
            **ended,
        )
        self._events.emit(
            StatusEvent(agent=self.state.name, status=status, task_id=task_id, reason=reason)
        )
        self._on_state()

    def refresh_task(self) -> None:
        """Re-read the held task after a claim/complete/plan made through a tool."""
        held = self.held()
        self.set_status("working", held.id if held else None, "")

    def warn(self, text: str) -> None:
        self._events.emit(Notice(agent=self.state.name, text=text, level="warning"))


class TrackingGate:
    """Wraps `gate` (anything with check(tool, args, ctx)) for one teammate's `tracking`."""

    def __init__(self, gate, tracking: Tracking) -> None:
        self._gate = gate
        self._tracking = tracking

    def check(self, tool, args, ctx, hook=None):
        decision = None
        if not tool.read_only and not tool.plan_exempt:
            decision = self._lost_plan_refusal(tool, args, ctx)
        if decision is None:
            extra = {"hook": hook} if hook else {}
            decision = self._gate.check(tool, args, ctx, **extra)
        if not decision.allowed:
            self._tracking.note_denial(tool, decision)
            if decision.source == "plan":  # told to get a plan approved: not a stall
                first = (decision.message or "plan approval required").splitlines()[0]
                self._tracking.note_plan_refusal(shorten(first, 160))
        return decision

    def __getattr__(self, name: str):
        return getattr(self._gate, name)

    def _lost_plan_refusal(self, tool, args, ctx):
        """The plan gate for a plan the store lost (set aside) but this teammate remembers;
        None when the store still knows it (the shared gate decides then)."""
        from ..permissions.gate import Decision

        why = self._tracking.lost_plan_block()
        if why is None:
            return None
        audit = getattr(self._gate, "audit", None)
        if audit is not None:
            audit.record(
                agent=ctx.agent,
                tool=tool.name,
                input=args.model_dump(mode="json"),
                decision="deny",
                source="plan",
                feedback="",
            )
        return Decision(False, "plan", why)
