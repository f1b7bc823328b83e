"""One teammate: a thread that finds its own work, runs it, and follows the team protocols.

Lifecycle: WORK -> IDLE -> WORK ... -> SHUTDOWN (or FAILED). The idle check runs in a fixed
order every time: (1) protocol messages, handled by the host before any model call (a
shutdown always wins over new work); (2) ordinary messages resume work, labelled with their
sender; (3) unless the latest plan is pending or rejected, claim the next ready task; (4)
otherwise wait on the runtime's change signal, re-checking cheap on-disk stamps every
check interval so other processes' changes are noticed. No model call happens while idle.
"""

from __future__ import annotations

import os
import threading
import time
from string import Template
from typing import TYPE_CHECKING

from ..errors import CorruptFile, StorageError, UserError
from ..events import MessageEvent, Notice, StatusEvent, TaskEvent
from ..names import LEAD
from ..prompts import load_prompt
from . import plans
from .claimgate import CLOSING
from .endings import Endings
from .framing import auto_claim_block, format_message, labelled, plan_review_block
from .intake import Intake
from .protocol import RequestExpired
from .roster import this_host, thread_name
from .tracking import TrackingGate

if TYPE_CHECKING:
    from ..board.models import Task
    from ..runtime import Runtime
    from .mailbox import MailMessage
    from .manager import Team
    from .protocol import ProtocolRequest

STOP_SHUTDOWN = "shutdown requested"


def render_prompt(prompt_name: str, **values: object) -> str:
    """prompts/<name>.md with $placeholders filled (unknown ones are left as they are)."""
    filled = {k: str(v) for k, v in values.items()}
    return Template(load_prompt(prompt_name)).safe_substitute(filled)


class Teammate(Endings):
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
        self.name = name
        self.role = role
        self.require_plan = require_plan
        self.plan_memory = plans.PlanMemory()  # its plan, should the store lose it
        team.status.register(name, role, model, require_plan)
        self.gate = TrackingGate(runtime.gate, self)
        self.intake = Intake(runtime.mail, name)
        self.agent = self._build_agent(model)
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._main, name=thread_name(name), daemon=True)
        self._injections: list[str] = []
        if prompt:
            self._injections.append(labelled(LEAD, "message", prompt))
        self._shutdown_msg: MailMessage | None = None
        self._denial: str | None = None
        self._reported = False  # the lead was told about the denial during this turn
        self._status: tuple | None = None
        self._idle_stamps: tuple | None = None  # (board, inbox, watching board) while waiting
        self._watch_board = True

    # ---- construction ----------------------------------------------------------------

    def _build_agent(self, model: str | None):
        from ..agent.agent import Agent, AgentSettings
        from ..agent.identity import Identity
        from ..tools.base import ToolSet
        from ..tools.team_tools import teammate_tools
        from ..tools.workspace import workspace_tools

        rt = self.rt
        team_name = rt.roster.team_name
        system = render_prompt(
            "teammate", name=self.name, role=self.role, team=team_name, workdir=rt.workdir
        )
        return Agent(
            Identity(self.name, self.role, team_name, rt.workdir),
            system,
            rt.make_model(self.name, model),
            ToolSet(teammate_tools() + workspace_tools()),
            self.gate,
            rt.events,
            transcript_dir=rt.team_dir / "transcripts",
            settings=AgentSettings(compact_threshold_tokens=rt.config.compact_threshold_tokens),
            runtime=rt,
            extra_identity=self.identity_extra,
            resume=(rt.team_dir / "transcripts" / f"{self.name}.jsonl").exists(),
        )

    def start(self) -> None:
        # which process runs it (other sessions check it): queued before the thread runs
        self.team.status.post(self.name, pid=os.getpid(), host=this_host())
        self.thread.start()

    def alive(self) -> bool:
        return self.thread.is_alive() and not self.done.is_set()

    # ---- what other threads ask ------------------------------------------------------

    def identity_extra(self) -> str:
        """What the identity block adds after a compaction: the task this teammate holds."""
        try:
            held = self.rt.board.held_by(self.name)
        except (UserError, CorruptFile):
            return ""
        if held is None:
            return "You hold no task; the host auto-claims ready tasks when you go idle."
        return (
            f"You hold task #{held.id} ({held.subject}), claim_token {held.claim_token}; "
            "finish it with complete_task."
        )

    def is_quiet(self) -> bool:
        """Waiting idle, and nothing it watches has changed since its last empty scan."""
        stamps = self._idle_stamps
        if stamps is None or not self.alive():
            return not self.alive()
        board, inbox, watching = stamps
        if self.rt.mail.stamp(self.name) != inbox:
            return False
        return not watching or self.rt.board.stamp() == board

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

    def refresh_task(self) -> None:
        """Re-read the held task after a claim/complete/plan made through a tool."""
        held = self._held()
        self._set_status("working", held.id if held else None, "")

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
        if held is not None and self._denial and not self._reported:
            self._report_hold(held)
        return True

    def _pre_call(self):
        """Before every model call: take in protocol answers, stop for a shutdown."""
        from ..agent.agent import PreCall

        if self._sort_inbox():
            return PreCall(stop=STOP_SHUTDOWN)
        self._note_plan_expiry()
        notes, self._injections = self._injections, []
        return PreCall(inject=notes) if notes else None

    # ---- the idle check --------------------------------------------------------------

    def _next_work(self) -> list[str] | None:
        """Steps (1)-(4) until there is work; None when a shutdown was accepted."""
        timeout = self.rt.config.idle_timeout_s
        idle_deadline = time.monotonic() + timeout if timeout > 0 else None
        self._watch_board = True
        while True:
            gen = self.rt.changes.generation
            stamps = (self.rt.board.stamp(), self.rt.mail.stamp(self.name))
            if self._sort_inbox():
                self._shut_down(self._shutdown_msg)
                return None
            self._note_plan_expiry()
            if self._injections or self.intake.has_held():
                work = self._injections + [format_message(m) for m in self.intake.take_held()]
                self._injections = []
                return work
            if self._watch_board:
                block = self._try_claim()
                if block is not None:
                    return [block]
            idle_deadline = self._wait(gen, stamps, idle_deadline)

    def _sort_inbox(self) -> bool:
        """Handle protocol messages, hold ordinary ones; True when a shutdown was accepted."""
        accepted = False
        expired: list[tuple[MailMessage, ProtocolRequest]] = []
        for msg in self.intake.poll():
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
                self.intake.hold(msg)
        for msg, req in expired if not accepted else ():  # moot once a fresh one was accepted
            self._report_expired_shutdown(msg, req)
        return accepted

    def _try_claim(self) -> str | None:
        """Step (3): claim the next ready task, or record why there is none."""
        held = self._held()
        held_id = held.id if held else None
        try:
            latest, lost = self.plan_memory.state(self.rt.protocols, self.name)
        except CorruptFile as exc:  # fail closed: no claim while the plan state is unknown
            self._set_status("idle", held_id, plans.unreadable(exc))
            return None
        if lost and latest.status != "approved":
            self._set_status("idle", held_id, "plan request lost: submit_plan again")
            return None
        if latest is not None and self.rt.protocols.has_expired(latest):
            self._set_status("idle", held_id, plans.EXPIRED_REASON)
            return None
        if latest is not None and latest.status == "pending":
            self._set_status("waiting_plan", held_id, "waiting for plan approval")
            return None
        if latest is not None and latest.status == "rejected":
            self._set_status("idle", held_id, "plan rejected: waiting for a message")
            return None
        if held is not None:
            why = self._denial or "waiting for a message (the task is not completed)"
            self._set_status("idle", held.id, f"holds #{held.id}: {why}")
            return None
        with self.team.claims.attempt() as allowed:
            if not allowed:  # the team is closing: a released task stays released
                self._set_status("idle", None, CLOSING)
                return None
            try:
                res = self.rt.board.claim_next(self.name)
            except StorageError as exc:  # a full or read-only disk: wait for a board change
                self._set_status("idle", None, f"cannot claim: {exc}")
                return None
        if res.task is None:
            self._set_status("idle", None, res.reason)
            return None
        task = res.task
        self.rt.events.emit(
            TaskEvent(
                agent=self.name,
                action="claimed",
                task_id=task.id,
                subject=task.subject,
                detail="auto-claimed",
            )
        )
        self._set_status("working", task.id, "")
        return auto_claim_block(task)

    def _wait(self, gen: int, stamps: tuple, idle_deadline: float | None) -> float | None:
        """Step (4): block until the inbox (or, while watched, the board) changes."""
        board0, inbox0 = stamps
        self._idle_stamps = (board0, inbox0, self._watch_board)
        self.team.state_changed()
        try:
            while True:
                wait_s = self.rt.config.check_interval_s
                if idle_deadline is not None:
                    left = idle_deadline - time.monotonic()
                    if left <= 0:
                        self._notify_idle()
                        idle_deadline = None
                        self._idle_stamps = (board0, inbox0, self._watch_board)
                        self.team.state_changed()
                    else:
                        wait_s = min(wait_s, left)
                self.rt.changes.wait(gen, wait_s)
                gen = self.rt.changes.generation
                if self.rt.mail.stamp(self.name) != inbox0:
                    self._watch_board = True
                    return idle_deadline
                if self._watch_board and self.rt.board.stamp() != board0:
                    return idle_deadline
                if self.plan_memory.expiry_due(self.rt.protocols):
                    return idle_deadline  # tell it to submit its plan again
        finally:
            self._idle_stamps = None

    def _notify_idle(self) -> None:
        """One idle_notification per idle period; then only a message wakes the teammate."""
        self._watch_board = False
        reason = self._status[2] if self._status else ""
        content = f"{self.name} is idle: {reason}" if reason else f"{self.name} is idle"
        self.rt.mail.send(self.name, LEAD, content, type="idle_notification")
        self.rt.events.emit(
            MessageEvent(agent=self.name, to=LEAD, msg_type="idle_notification", preview=content)
        )

    # ---- protocols -------------------------------------------------------------------

    def _accept_shutdown(
        self, msg: MailMessage, expired: list[tuple[MailMessage, ProtocolRequest]]
    ) -> bool:
        """Resolve the request as accepted; one that expired unanswered goes to `expired`."""
        try:
            self.rt.protocols.resolve(
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
        self._shutdown_msg = msg
        return True

    def _take_plan_answer(self, msg: MailMessage) -> None:
        why = plans.check_response(self.rt.protocols, self.name, msg)
        if why is None:
            try:
                req = self.rt.protocols.get(msg.request_id)
            except (UserError, CorruptFile) as exc:  # changed since the check
                why = plans.unreadable(exc) if isinstance(exc, CorruptFile) else str(exc)
        if why is not None:
            self._warn(f"{self.name} rejected a plan_approval_response from {msg.sender}: {why}")
            return
        self.plan_memory.note(req)
        approved = req.status == "approved"
        self._injections.append(plan_review_block(req.id, approved, req.resolution or ""))

    def _note_plan_expiry(self) -> None:
        """Once per plan: tell the model its plan request expired unreviewed (fail closed)."""
        notice = self.plan_memory.expiry_notice(self.rt.protocols, self.name)
        if notice is not None:
            self._injections.append(notice)
            self._warn(f"{self.name}'s plan request expired before review; asked to resubmit")

    def lost_plan_block(self) -> str | None:
        """The refusal for a remembered plan the store lost, else None (the store decides)."""
        return self.plan_memory.lost_block(self.rt.protocols, self.name)

    def _plan_block(self) -> str | None:
        return plans.plan_block(
            self.rt.protocols, self.name, self.require_plan, known=self.plan_memory.known
        )

    # ---- small helpers ---------------------------------------------------------------

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
        self.team.status.post(self.name, tokens=self.agent.usage.total)

    def _warn(self, text: str) -> None:
        self.rt.events.emit(Notice(agent=self.name, text=text, level="warning"))
