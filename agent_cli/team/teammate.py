"""One teammate: a thread that finds its own work, runs it, and follows the team protocols.

Lifecycle: WORK -> IDLE -> WORK ... -> SHUTDOWN (or FAILED). Teammate owns the thread and a
turn of work, and wires its collaborators around one TeammateState (teammate_state.py), each
given only what it uses: the idle check finds the next work (idle.py), the protocol inbox
takes in protocol messages before every model call (protocol_inbox.py), the endings shut it
down on an accepted request, fail it on a model error, and report a task it holds but could
not finish (endings.py), tracking keeps its status and denials (tracking.py), and the stall
guard reminds it of a held task it left unfinished and unreported, then tells the lead
(stall.py).
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING

from ..errors import CorruptFile, UserError
from ..framing import labelled
from ..fsutil import utc_now
from ..names import LEAD
from ..permissions.hook_events import notify, subagent_start, subagent_stop
from .agent_types import agent_types, type_model
from .agents import build_agent, render_prompt
from .endings import Endings
from .idle import IdleLoop
from .idle_hook import idle_hook_work
from .intake import Intake
from .protocol_inbox import ProtocolInbox
from .roster import this_host, thread_name
from .teammate_state import TeammateState
from .tracking import Tracking, TrackingGate

if TYPE_CHECKING:
    from ..agent.agent import PreCall
    from ..board.models import Task
    from ..models.thinking import Thinking
    from ..runtime import Runtime
    from . import plans
    from .manager import Team
    from .stall import StallGuard

__all__ = ["STOP_SHUTDOWN", "Teammate", "render_prompt"]

STOP_SHUTDOWN = "shutdown requested"


class Teammate:
    """A teammate thread and its collaborators. Built and started by Team.spawn."""

    def __init__(
        self,
        runtime: Runtime,
        team: Team,
        name: str,
        role: str,
        model: str | None = None,
        require_plan: bool = False,
        prompt: str | None = None,
        thinking: Thinking | None | bool = True,
    ) -> None:
        self.rt = runtime
        self.team = team
        self.state = TeammateState(name, role, require_plan, born_at=utc_now())
        if prompt:
            self.state.injections.append(labelled(LEAD, "message", prompt))
        team.status.register(name, role, model, require_plan)
        self.tracking = Tracking(
            self.state, runtime.board, runtime.protocols, runtime.events, team.status,
            team.state_changed,
        )
        self.gate = TrackingGate(runtime.gate, self.tracking)
        self.intake = Intake(runtime.mail, name)
        self.agent = self._build_agent(model, thinking)
        self.intake.durable = self.agent.delivered  # ids in its transcript: never again
        self.agent.workspace = lambda: runtime.worktrees.workspace_for(name)  # its task's worktree
        self.endings = Endings(
            self.state, self.tracking, self.intake, runtime.board, runtime.mail,
            runtime.protocols, runtime.events,
        )
        self.inbox = ProtocolInbox(
            self.state, self.tracking, self.endings, self.intake, runtime.protocols
        )
        self.idle = self._build_idle_loop()
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._main, name=thread_name(name), daemon=True)

    def _build_agent(self, model: str | None, thinking: Thinking | None | bool):
        from .team_tools import teammate_tools

        transcript = self.rt.team_dir / "transcripts" / f"{self.name}.jsonl"
        kind = agent_types(self.rt).get(self.role)  # a role that names an agent type
        if kind is not None and model is None:
            model = type_model(self.rt, self.name, kind)
        return build_agent(
            self.rt,
            self.name,
            self.role,
            "teammate",
            teammate_tools(self.team),
            self.gate,
            model=model,
            extra_identity=self.identity_extra,
            resume=transcript.exists(),
            thinking=thinking,
            agent_type=kind,
        )

    def _build_idle_loop(self) -> IdleLoop:
        rt, state = self.rt, self.state
        hooks, cancel = getattr(rt, "hooks", None), self.agent.cancel_event
        team_name = rt.roster.team_name
        return IdleLoop(
            state,
            tracking=self.tracking,
            inbox=self.inbox,
            endings=self.endings,
            intake=self.intake,
            board=rt.board,
            mail=rt.mail,
            events=rt.events,
            protocols=rt.protocols,
            changes=rt.changes,
            claims=self.team.claims,
            idle_timeout_s=rt.config.idle_timeout_s,
            recheck=rt.recheck_interval,
            prepare=lambda task, name: rt.worktrees.prepare(task, name),
            idle_hook=lambda: self._idle_hook(hooks, team_name, cancel),
            on_state=self.team.state_changed,
        )

    def _idle_hook(self, hooks, team_name: str, cancel: threading.Event) -> list[str] | None:
        """TeammateIdle; then, when it lets this teammate idle and every other one is quiet
        too, the Notification that the team went idle."""
        work = idle_hook_work(hooks, self.state, self.rt.events, team_name, cancel)
        if work is None and hooks is not None and hooks.active("Notification", "idle_prompt"):
            if self.team.quiet_except(self.name):
                notify(hooks, self.name, "idle_prompt",
                       f"the team is idle: {self.name} and every other teammate wait for work")
        return work

    # ---- what the team, the tools and the UI ask of a teammate ------------------------

    @property
    def name(self) -> str:
        return self.state.name

    @property
    def role(self) -> str:
        return self.state.role

    @property
    def require_plan(self) -> bool:
        return self.state.require_plan

    @property
    def plan_memory(self) -> plans.PlanMemory:
        """Its plan, should the store lose it (submit_plan notes the new request here)."""
        return self.state.plan_memory

    @property
    def stalls(self) -> StallGuard:
        return self.state.stalls

    def start(self) -> None:
        # which process runs it (other sessions check it): queued before the thread runs
        self.team.status.post(self.name, pid=os.getpid(), host=this_host())
        self.thread.start()

    def alive(self) -> bool:
        return self.thread.is_alive() and not self.done.is_set()

    def is_quiet(self) -> bool:
        """Ended, or waiting idle with nothing it watches changed since its last empty scan."""
        return not self.alive() or self.idle.quiet()

    def note_sent(self, to: str) -> None:
        """Called by send_message: a teammate that told the lead itself gets no host report."""
        self.tracking.note_sent(to)

    def note_blocked(self, why: str) -> None:
        """Called by complete_task when the host's verify failed: the turn is reported."""
        self.state.stalls.note_blocked(why)

    def refresh_task(self) -> None:
        """Re-read the held task after a claim/complete/plan made through a tool."""
        self.tracking.refresh_task()

    def identity_extra(self) -> str:
        """What the identity block adds after a compaction: the task this teammate holds."""
        try:
            held = self.rt.board.held_by(self.name)
        except (UserError, CorruptFile):
            return ""
        if held is None:
            return "You hold no task; the host auto-claims ready tasks when you go idle."
        plan = " It requires a plan approved for it before any change." * held.require_plan
        ws = self.rt.worktrees.workspace_for(self.name)
        where = f" You work in its worktree: {ws.root}." if ws is not None else ""
        return (
            f"You hold task #{held.id} ({held.subject}), claim_token {held.claim_token}; "
            f"finish it with complete_task.{plan}{where}"
        )

    def idle_reminder(self) -> str | None:
        """Called by the `idle` tool: the reminder while holding an unreported task."""
        held = self.tracking.held()
        text = self.state.stalls.idle_reminder(held, self.tracking.turn_reported())
        if text is not None and held is not None:
            self.endings.note_reminder(held, "called idle")
        return text

    # ---- the thread ------------------------------------------------------------------

    def _main(self) -> None:
        try:
            while True:
                work = self.idle.next_work()
                if work is None or not self._work(work):
                    break
        except Exception as exc:  # a bug or a storage failure: fail, never take the REPL down
            self.endings.fail(f"{type(exc).__name__}: {exc}")
        finally:
            self.done.set()
            self.team.state_changed()

    def _work(self, content: list[str]) -> bool:
        """One turn with the injected content; False when the thread must end."""
        s, tracking = self.state, self.tracking
        s.denial, s.reported = None, False
        s.stalls.begin_turn()
        held = tracking.held()
        tracking.set_status("working", held.id if held else None, "")
        hooks = getattr(self.rt, "hooks", None)
        subagent_start(hooks, self.name, self.role)
        result = self.agent.run_turn(content, pre_call=self._pre_call)
        subagent_stop(hooks, self.name, self.role, result.text)
        self.intake.ack()
        self._record_tokens()
        if s.shutdown_msg is not None:
            self.endings.shut_down(s.shutdown_msg)
            return False
        if result.error is not None or result.stop_reason == "error":
            err = result.error
            kind = getattr(err, "kind", "error")
            self.endings.fail(f"model error ({kind}): {err}" if err else "model error")
            return False
        held = tracking.held()
        blocker = s.denial or s.stalls.blocker
        told = s.reported if s.denial else s.stalls.told_lead
        if held is not None and blocker and not told:
            self.endings.report_hold(held, blocker)
        if held is not None:
            self._after_stall(held, result.stop_reason)
        return True

    def _after_stall(self, held: Task, stop_reason: str) -> None:
        action = self.state.stalls.after_turn(held, stop_reason, self.tracking.turn_reported())
        if action.remind is not None:
            self.state.injections.append(action.remind)
            self.endings.note_reminder(held, f"ended its turn ({stop_reason})")
        elif action.report is not None:
            self.endings.report_stall(action.report)

    def _pre_call(self) -> PreCall | None:
        """Before every model call: take in protocol answers, stop for a shutdown."""
        from ..agent.agent import PreCall

        if self.inbox.sort():
            return PreCall(stop=STOP_SHUTDOWN)
        self.inbox.note_plan_expiry()
        notes, self.state.injections = self.state.injections, []
        return PreCall(inject=notes) if notes else None

    def _record_tokens(self) -> None:
        self.team.status.post(
            self.name, tokens=self.agent.usage.total, spend=self.agent.spend.rows()
        )
