"""What a teammate tracks about itself: its status, its denials, and the gate that sees them.

Tracking is the base of Teammate (and of its Endings, ProtocolInbox and IdleLoop layers): it
writes the teammate's status to the roster (through Team.status) and as a StatusEvent, only
when it changed; records its token count; remembers why a call of this turn was denied (so
the teammate can say why it holds an unfinished task: "holds #3: shell run was denied"); and
answers whether its plan closes its effectful tools.

TrackingGate is the shared permission gate as one teammate sees it: it reports the
teammate's denials, and refuses effectful tools while the teammate's plan is one the
protocol store lost (requests.json was unreadable and set aside) but the teammate remembers
as pending or rejected: the shared gate would find no plan there and open.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from ..errors import CorruptFile
from ..events import Notice, StatusEvent
from ..names import LEAD
from . import plans

if TYPE_CHECKING:
    from ..agent.agent import Agent
    from ..board.models import Task
    from ..runtime import Runtime
    from .manager import Team
    from .stall import StallGuard


class Tracking:
    """Status, tokens and denials of one teammate (state set up by Teammate.__init__)."""

    rt: Runtime
    team: Team
    name: str
    agent: Agent
    thread: threading.Thread
    done: threading.Event  # set when the thread's run has ended
    require_plan: bool
    plan_memory: plans.PlanMemory
    _status: tuple | None  # (status, task id, reason) last written
    _denial: str | None  # why a call of this turn was refused
    _reported: bool  # the teammate told the lead itself during this turn
    stalls: StallGuard  # reminders for a held task left unfinished

    def alive(self) -> bool:
        return self.thread.is_alive() and not self.done.is_set()

    def note_denial(self, tool, decision) -> None:
        """Called by TrackingGate when a call of this teammate's was refused."""
        try:
            if decision.source == "plan" or self._plan_block() is not None:
                return  # the plan gate: the idle reason says "waiting for plan approval"
        except CorruptFile:
            return  # the idle check says the plan state cannot be read
        what = "shell run" if tool.name == "shell" else f"{tool.name}"
        self._denial = f"{what} was denied"
        if decision.message:
            self._denial += f" ({decision.message.splitlines()[0][:120]})"

    def note_sent(self, to: str) -> None:
        """Called by send_message: a teammate that told the lead itself gets no host report."""
        if to == LEAD and self._denial:
            self._reported = True
        if to == LEAD:
            self.stalls.note_told_lead()

    def note_blocked(self, why: str) -> None:
        """Called by complete_task when the host's verify failed: the turn is reported."""
        self.stalls.note_blocked(why)

    def refresh_task(self) -> None:
        """Re-read the held task after a claim/complete/plan made through a tool."""
        held = self._held()
        self._set_status("working", held.id if held else None, "")

    def lost_plan_block(self) -> str | None:
        """The refusal for a remembered plan the store lost, else None (the store decides)."""
        return self.plan_memory.lost_block(self.rt.protocols, self.name)

    def _plan_block(self) -> str | None:
        return plans.plan_block(
            self.rt.protocols, self.name, self.require_plan, known=self.plan_memory.known
        )

    def _held(self) -> Task | None:
        return self.rt.board.held_by(self.name)

    def _set_status(self, status: str, task_id: int | None, reason: str) -> None:
        key = (status, task_id, reason)
        if key == self._status:
            return
        self._status = key
        ended = {"pid": None, "host": None} if status in ("shutdown", "failed") else {}
        # "working" is written while the model runs (the wake-up path); others before going on
        self.team.status.post(
            self.name,
            wait=status != "working",
            status=status,
            current_task=task_id,
            idle_reason=reason,
            **ended,
        )
        self.rt.events.emit(
            StatusEvent(agent=self.name, status=status, task_id=task_id, reason=reason)
        )
        self.team.state_changed()

    def _record_tokens(self) -> None:
        self.team.status.post(
            self.name, tokens=self.agent.usage.total, spend=self.agent.spend.rows()
        )

    def _warn(self, text: str) -> None:
        self.rt.events.emit(Notice(agent=self.name, text=text, level="warning"))


class TrackingGate:
    """Wraps `gate` (anything with check(tool, args, ctx)) for `teammate`."""

    def __init__(self, gate, teammate: Tracking) -> None:
        self._gate = gate
        self._teammate = teammate

    def check(self, tool, args, ctx, hook=None):
        decision = None
        if not tool.read_only and not tool.plan_exempt:
            decision = self._lost_plan_refusal(tool, args, ctx)
        if decision is None:
            extra = {"hook": hook} if hook else {}
            decision = self._gate.check(tool, args, ctx, **extra)
        if not decision.allowed:
            self._teammate.note_denial(tool, decision)
            if decision.source == "plan":  # told to get a plan approved: not a stall
                first = (decision.message or "plan approval required").splitlines()[0]
                self._teammate.stalls.plan_refusal = first[:160]
        return decision

    def __getattr__(self, name: str):
        return getattr(self._gate, name)

    def _lost_plan_refusal(self, tool, args, ctx):
        """The plan gate for a plan the store lost (set aside) but this teammate remembers;
        None when the store still knows it (the shared gate decides then)."""
        from ..permissions.gate import Decision

        why = self._teammate.lost_plan_block()
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
