"""One teammate: a thread that finds its own work, runs it, and follows the team protocols.

Lifecycle: WORK -> IDLE -> WORK ... -> SHUTDOWN (or FAILED). This module owns the thread and
a turn of work: its content comes from the idle check (idle.py), the pre-call hook takes in
protocol messages before every model call (protocol_inbox.py), and after the turn the
teammate shuts down on an accepted request, fails on a model error, reports a task it
holds but could not finish because of a denial or a failed verify (endings.py), or reminds
itself of a held task it left unfinished and unreported, then tells the lead (stall.py).
Status, tokens and denials are tracked in tracking.py. The layers stack as Tracking <-
Endings <- ProtocolInbox <- IdleLoop <- Teammate; Teammate.__init__ sets up the state they
share.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING

from ..errors import CorruptFile, UserError
from ..framing import labelled
from ..fsutil import utc_now
from ..names import LEAD
from . import plans
from .agents import build_agent, render_prompt
from .idle import IdleLoop
from .intake import Intake
from .roster import this_host, thread_name
from .stall import StallGuard
from .tracking import TrackingGate

if TYPE_CHECKING:
    from ..agent.agent import PreCall
    from ..runtime import Runtime
    from .mailbox import MailMessage
    from .manager import Team

__all__ = ["STOP_SHUTDOWN", "Teammate", "render_prompt"]

STOP_SHUTDOWN = "shutdown requested"


class Teammate(IdleLoop):
    """A teammate thread and its state. Built and started by Team.spawn."""

    def __init__(
        self,
        runtime: Runtime,
        team: Team,
        name: str,
        role: str,
        model: str | None = None,
        require_plan: bool = False,
        prompt: str | None = None,
    ) -> None:
        self.rt = runtime
        self.team = team
        self._born_at = utc_now()  # a shutdown accepted before this is an earlier run's
        self.name = name
        self.role = role
        self.require_plan = require_plan
        self.plan_memory = plans.PlanMemory()  # its plan, should the store lose it
        team.status.register(name, role, model, require_plan)
        self.gate = TrackingGate(runtime.gate, self)
        self.intake = Intake(runtime.mail, name)
        self.agent = self._build_agent(model)
        self.intake.durable = self.agent.delivered  # ids in its transcript: never again
        self._resume_held = True  # the first idle check resumes a task it still holds
        self.agent.workspace = lambda: runtime.worktrees.workspace_for(name)  # its task's worktree
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._main, name=thread_name(name), daemon=True)
        self._injections: list[str] = []
        if prompt:
            self._injections.append(labelled(LEAD, "message", prompt))
        self._shutdown_msg: MailMessage | None = None
        self._denial: str | None = None
        self._reported = False  # the lead was told about the denial during this turn
        self.stalls = StallGuard(name)  # reminders for a held task left unfinished (stall.py)
        self._status: tuple | None = None
        self._idle_stamps: tuple | None = None  # (board, inbox, watching board) while waiting
        self._watch_board = True

    def _build_agent(self, model: str | None):
        from ..tools.team_tools import teammate_tools

        transcript = self.rt.team_dir / "transcripts" / f"{self.name}.jsonl"
        return build_agent(
            self.rt,
            self.name,
            self.role,
            "teammate",
            teammate_tools(),
            self.gate,
            model=model,
            extra_identity=self.identity_extra,
            resume=transcript.exists(),
        )

    def start(self) -> None:
        # which process runs it (other sessions check it): queued before the thread runs
        self.team.status.post(self.name, pid=os.getpid(), host=this_host())
        self.thread.start()

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

    # ---- the thread ------------------------------------------------------------------

    def _main(self) -> None:
        try:
            while True:
                work = self._next_work()
                if work is None or not self._work(work):
                    break
        except Exception as exc:  # a bug or a storage failure: fail, never take the REPL down
            self._fail(f"{type(exc).__name__}: {exc}")
        finally:
            self.done.set()
            self.team.state_changed()

    def _work(self, content: list[str]) -> bool:
        """One turn with the injected content; False when the thread must end."""
        self._denial, self._reported = None, False
        self.stalls.begin_turn()
        held = self._held()
        self._set_status("working", held.id if held else None, "")
        result = self.agent.run_turn(content, pre_call=self._pre_call)
        self.intake.ack()
        self._record_tokens()
        if self._shutdown_msg is not None:
            self._shut_down(self._shutdown_msg)
            return False
        if result.error is not None or result.stop_reason == "error":
            err = result.error
            kind = getattr(err, "kind", "error")
            self._fail(f"model error ({kind}): {err}" if err else "model error")
            return False
        held = self._held()
        blocker = self._denial or self.stalls.blocker
        told = self._reported if self._denial else self.stalls.told_lead
        if held is not None and blocker and not told:
            self._report_hold(held, blocker)
        if held is not None:
            self._after_stall(held, result.stop_reason)
        return True

    def idle_reminder(self) -> str | None:
        """Called by the `idle` tool: the reminder while holding an unreported task."""
        held = self._held()
        text = self.stalls.idle_reminder(held, self._turn_reported())
        if text is not None and held is not None:
            self._note_reminder(held, "called idle")
        return text

    def _turn_reported(self) -> bool:
        """This turn said why its task is not done: a denial, a failed verify, a message to
        the lead, a plan-gate refusal, or a plan that keeps it from working (pending,
        rejected, lost, expired)."""
        stalls = self.stalls
        if self._denial or stalls.blocker or stalls.told_lead or stalls.plan_refusal:
            return True
        hold = self._hold_reason(self._held())
        return hold is not None and not hold[1].startswith("holds #")  # a plan state

    def _after_stall(self, held, stop_reason: str) -> None:
        action = self.stalls.after_turn(held, stop_reason, self._turn_reported())
        if action.remind is not None:
            self._injections.append(action.remind)
            self._note_reminder(held, f"ended its turn ({stop_reason})")
        elif action.report is not None:
            self._report_stall(action.report)

    def _pre_call(self) -> PreCall | None:
        """Before every model call: take in protocol answers, stop for a shutdown."""
        from ..agent.agent import PreCall

        if self._sort_inbox():
            return PreCall(stop=STOP_SHUTDOWN)
        self._note_plan_expiry()
        notes, self._injections = self._injections, []
        return PreCall(inject=notes) if notes else None
