"""Team: the teammate threads of one session, the lead agent, and the lead's inbox.

Team owns the in-process map of teammates (name -> Teammate), spawning and restarting them,
the shutdown protocol's request side, the plan gate it installs on the runtime's permission
gate, the headless "is the team quiet" wait, and the `<inbox>` block that opens the lead's
next turn. Teammate state on disk lives in the roster, mailbox and protocol store. The
composition root (app.open_runtime) builds it on a Runtime; the lead's and teammates' board
and team tools are bound to it (board_tools.py, team_tools.py).

Closing the team (`shutdown_all`) first closes automatic claims for everyone, and only then
sends the shutdown requests: a task one teammate releases on its way out is never picked up
by another teammate that is itself about to stop.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..errors import AgentCliError, AlreadyRunning, CorruptFile, NotFound, Refused
from ..events import MessageEvent, Notice
from ..names import LEAD, check_name
from .assignments import AssignmentWatch
from .claimgate import ClaimGate
from .renewer import HEARTBEAT_S, LeaseRenewer
from .status import StatusWriter

if TYPE_CHECKING:  # the agent engine and the tools' models: imported at the first spawn
    from ..agent.agent import Agent
    from ..models.thinking import Thinking
    from ..runtime import Runtime
    from .mailbox import MailMessage
    from .protocol import ProtocolRequest
    from .roster import Member
    from .teammate import Teammate


INTERRUPT_GRACE_S = 1.0  # after shutdown_all's deadline, how long an interrupted teammate gets


class Team:
    def __init__(self, runtime: Runtime) -> None:
        self.rt = runtime
        self.claims = ClaimGate()
        self._mates: dict[str, Teammate] = {}
        self._lock = threading.RLock()
        self._state = threading.Condition()
        self._state_gen = 0
        self._lead_seen: set[str] = set()
        self._lead: Agent | None = None
        self._parts_lock = threading.Lock()  # status and leases: built at first use
        self._status: StatusWriter | None = None
        self._leases: LeaseRenewer | None = None
        runtime.gate.plan_gate = self.plan_block
        self.assignments = AssignmentWatch(runtime, lambda: self.claims.is_open)
        runtime.events.subscribe(self.assignments.on_event)

    @property
    def status(self) -> StatusWriter:
        """The roster's writer, built at first use (the runtime's stores are lazy)."""
        with self._parts_lock:
            if self._status is None:
                self._status = StatusWriter(self.rt.roster, self._warn)
            return self._status

    @property
    def leases(self) -> LeaseRenewer:
        """The lease renewer, built at first use (the runtime's stores are lazy)."""
        with self._parts_lock:
            if self._leases is None:
                self._leases = LeaseRenewer(
                    self.rt.board, self._renewable, self._warn,
                    heartbeat=getattr(self.rt.roster, "heartbeat", None),  # a database's
                    heartbeat_s=getattr(self.rt.roster, "stale_s", 3 * HEARTBEAT_S) / 3)
            return self._leases

    # ---- teammates -------------------------------------------------------------------

    def spawn(
        self,
        name: str,
        role: str,
        prompt: str | None = None,
        model: str | None = None,
        require_plan: bool = False,
        thinking: Thinking | None | bool = True,
    ) -> Member:
        """Start (or restart) teammate `name`; Refused if it is running or is the lead.
        `thinking`: True for the session's extended thinking, else the teammate's own."""
        check_name(name, "teammate name")
        if name == LEAD:
            raise Refused("'lead' is the lead's own name; pick another teammate name")
        self._refuse_running(name)
        from .teammate import Teammate

        # Built outside the team lock: a restart reads the old transcript, and every
        # teammate's plan check (plan_block -> teammate()) takes that lock.
        mate = Teammate(self.rt, self, name, role, model, require_plan, prompt, thinking)
        self.rt.watcher.start()  # idle teammates are woken by other processes' writes
        with self._lock:
            self._refuse_running(name)
            # Refused if another live process runs this name (pid and host in config.json).
            member = self.rt.roster.add_running(name, role, model, require_plan)
            self.claims.reopen()  # a spawn after shutdown_all means the team runs again
            self._mates[name] = mate
            mate.start()
        self.leases.start()
        if self.rt.session is not None:
            from .sessions import SessionStore

            SessionStore(self.rt.team_dir).note_member(self.rt.session, name)
        self.rt.events.emit(Notice(agent=LEAD, text=f"spawned {name} ({member.role})"))
        return member

    def _refuse_running(self, name: str) -> None:
        with self._lock:
            current = self._mates.get(name)
            if current is not None and current.alive():
                raise AlreadyRunning(f"{name} is already running")

    def request_shutdown(self, name: str, sender: str = LEAD) -> ProtocolRequest:
        """Store a pending shutdown request, then send it. A pending one from `sender` is
        reused; an expired one is not (it can no longer be answered): a fresh one is sent."""
        check_name(name, "teammate name")
        mate = self.teammate(name)
        if (mate is None or not mate.alive()) and not self.runs_elsewhere(name):
            raise Refused(f"{name} is not running")
        try:
            pending = self.rt.protocols.pending("shutdown", target=name)
        except CorruptFile:
            pending = []  # create() sets the unreadable file aside and starts a fresh one
        for req in pending:
            if req.sender == sender:
                return req
        req = self.rt.protocols.create("shutdown", sender, name, content="finish and shut down")
        self.rt.mail.send(
            sender,
            name,
            "please finish your current step and shut down",
            type="shutdown_request",
            request_id=req.id,
        )
        self.rt.events.emit(
            MessageEvent(
                agent=sender, to=name, msg_type="shutdown_request", preview="shutdown requested"
            )
        )
        return req

    def runs_elsewhere(self, name: str) -> bool:
        """`name` runs in another process (`agent-cli teammate`, another session): its roster
        entry is not ended and names another process, alive when it is on this host (another
        host cannot be checked from here: its lease tells when it is gone)."""
        from .roster import this_host

        member = self.rt.roster.get(name)
        if member is None or member.status in ("shutdown", "failed") or member.pid is None:
            return False
        if member.host != this_host():
            return True
        return member.pid != os.getpid() and self.rt.roster.is_alive(member)

    def running(self) -> list[str]:
        with self._lock:
            return [n for n, m in self._mates.items() if m.alive()]

    def teammate(self, name: str) -> Teammate | None:
        with self._lock:
            return self._mates.get(name)

    def close(self, timeout: float) -> list[str]:
        """End of the session: record who is still running (`--continue` brings them back),
        then shutdown_all. Returns the names still busy at the deadline."""
        if self.rt.session is not None:
            from .resume import end_session

            end_session(self.rt, self.running())
        return self.shutdown_all(timeout)

    def shutdown_all(self, timeout: float) -> list[str]:
        """Close claims for everyone, then request shutdown of every running teammate and
        wait up to `timeout` for their threads.

        Returns the names still busy (e.g. waiting for a human's approval) at the deadline.
        """
        deadline = time.monotonic() + timeout
        self.claims.close(timeout)  # before any request: a released task stays released
        names = self.running()
        sent: set[str] = set()  # requests made here, not ones the lead had already made
        for name in names:
            try:
                before = self._pending_shutdowns(name)
                req = self.request_shutdown(name)
                if req.id not in before:
                    sent.add(req.id)
            except Refused:
                pass  # it ended meanwhile
            except AgentCliError as exc:  # e.g. a full disk: still stop the others
                self._warn(f"could not ask {name} to shut down: {exc}")
        mates = [m for m in (self.teammate(n) for n in names) if m is not None]
        for mate in mates:
            mate.thread.join(max(0.0, deadline - time.monotonic()))
        busy = [m.name for m in mates if m.thread.is_alive()]
        for mate in mates:  # past the deadline: stop a running shell command or model call
            if mate.thread.is_alive():
                mate.agent.interrupt()
        for mate in mates:
            mate.thread.join(INTERRUPT_GRACE_S if mate.thread.is_alive() else 0)
        if self._status is not None:  # else nothing was ever posted
            self._status.flush(max(0.0, deadline - time.monotonic()))
        if self._leases is not None:  # else no renewer ever ran
            self._leases.stop()
        self._file_closing_answers(sent)
        return busy

    def _pending_shutdowns(self, name: str) -> set[str]:
        try:
            return {r.id for r in self.rt.protocols.pending("shutdown", target=name)}
        except CorruptFile:
            return set()

    def _file_closing_answers(self, request_ids: set[str]) -> None:
        """The answers to the shutdown requests of closing the team are bookkeeping, not news:
        marked taken in (in the lead's transcript), so a resumed lead is not told that
        teammates it gets back have shut down."""
        lead = self._lead
        if lead is None or lead.transcript_path is None or not request_ids:
            return
        from ..agent.transcript import Transcript

        ids = [m.id for m in self.rt.mail.peek(LEAD)
               if m.type == "shutdown_response" and m.request_id in request_ids]
        if ids:
            try:
                Transcript(lead.transcript_path.parent, LEAD).taken_in(ids)
            except AgentCliError as exc:
                self._warn(f"could not file the shutdown answers: {exc}")
            lead.delivered.mark(ids)

    def _renewable(self) -> list[str]:
        """Whose leases the renewer keeps alive: live teammate threads, and the lead."""
        return [LEAD, *self.running()]

    # ---- quiet -----------------------------------------------------------------------

    def state_changed(self) -> None:
        """Teammates call this on every status change; wakes wait_quiet."""
        with self._state:
            self._state_gen += 1
            self._state.notify_all()

    def is_quiet(self) -> bool:
        """Every live teammate waits idle and nothing it watches changed since its last scan.

        A teammate waiting for a human's approval is mid-turn, so it is not quiet; one that
        sent its idle notification watches only its inbox; shut-down and failed ones count
        as quiet. With no teammates the team is quiet.
        """
        with self._lock:
            mates = list(self._mates.values())
        return all(m.is_quiet() for m in mates)

    def quiet_except(self, name: str) -> bool:
        """Is every live teammate but `name` quiet? (`name` is about to wait idle.)"""
        with self._lock:
            mates = [m for n, m in self._mates.items() if n != name]
        return all(m.is_quiet() for m in mates)

    def wait_quiet(self, timeout: float, wake: Callable[[], bool] | None = None) -> bool:
        """Block until is_quiet() (True) or `timeout` seconds pass (False).

        With `wake`, also return False as soon as wake() is true (checked first, on every
        state change and at least every check interval): e.g. a plan request for the lead.
        """
        deadline = time.monotonic() + timeout
        while True:
            with self._state:
                gen = self._state_gen
            if wake is not None and wake():
                return False
            if self.is_quiet():
                return self.status.flush(max(0.0, deadline - time.monotonic()))
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            with self._state:
                if self._state_gen == gen:
                    self._state.wait(min(left, self.rt.config.check_interval_s))

    # ---- plan gate -------------------------------------------------------------------

    def plan_block(self, agent: str) -> str | None:
        """The runtime gate's plan_gate: why `agent`'s effectful tools are refused, or None:
        its own plan (spawned with require_plan), then the plan the task it holds requires."""
        if agent == LEAD:
            return None
        mate = self.teammate(agent)
        if mate is None:
            member = self.rt.roster.get(agent)
            require = bool(member and member.require_plan)
        else:
            require = mate.require_plan
        from . import task_plans  # (plans, framing: at the first tool call)

        return task_plans.gate(self.rt, agent, require)

    # ---- the lead --------------------------------------------------------------------

    def make_lead(self) -> Agent:
        """The lead Agent: prompts/lead.md, the lead's board/team tools and workspace tools."""
        from .agents import build_agent
        from .lead_usage import LeadUsage
        from .roster import this_host
        from .team_tools import lead_tools

        session = self.rt.session
        where = session.dir if session is not None else None
        resume = session is not None and session.lead_transcript.exists()
        self._lead = build_agent(
            self.rt, LEAD, "lead", "lead", lead_tools(self), self.rt.gate,
            transcript_dir=where, resume=resume,
        )
        if session is not None and not resume:
            from .sessions import previous_lead_transcript

            earlier = previous_lead_transcript(self.rt.team_dir, session)
            if earlier is not None:  # what the last session's lead took in stays taken
                self._lead.delivered.load(earlier)
        self.rt.events.subscribe(LeadUsage(self.rt.team_dir, self._lead, this_host()).on_event)
        if getattr(self._lead.model, "runs_server_tools", False):
            from ..models.web_tools import offered

            for why in offered(self.rt.policy.rules()).withheld:  # said once, at the start
                self.rt.events.emit(Notice(LEAD, why, "warning"))
        return self._lead

    def _lead_delivered(self, msg_id: str) -> bool:
        lead = self._lead
        return msg_id in self._lead_seen or (lead is not None and msg_id in lead.delivered)

    def lead_unread(self) -> list[MailMessage]:
        """The lead's messages no turn has taken in yet (a peek: nothing is acknowledged)."""
        return [m for m in self.rt.mail.peek(LEAD) if not self._lead_delivered(m.id)]

    def lead_inbox_block(self) -> str | None:
        """The lead's unread messages as one `<inbox>` block (then acknowledged), or None."""
        self.assignments.check()  # a task stranded since the last turn: a note from "board"
        delivery = self.rt.mail.fetch(LEAD)
        shown: list[MailMessage] = []
        for msg in delivery.messages:
            if self._lead_delivered(msg.id):
                continue
            self._lead_seen.add(msg.id)
            why = self._mismatch(msg)
            if why is not None:
                self.rt.events.emit(
                    Notice(
                        agent=LEAD,
                        level="warning",
                        text=f"rejected {msg.type} from {msg.sender}: {why}",
                    )
                )
                continue
            shown.append(msg)
        ack = self._lead_ack(delivery.cursor)
        if shown and self._lead is not None:  # acknowledged once the lead's transcript has them
            self._lead.delivered.add_pending([m.id for m in shown], on_commit=ack)
        else:
            ack()
        if not shown:
            return None
        from ..framing import inbox_block, labelled  # (html, regexes: at the first turn)

        notes = []
        if any(m.type == "result" for m in shown):  # work pushed from another host lands
            from .remote_branches import land_arrivals

            notes = [labelled("host", "landing", line) for line in land_arrivals(self.rt)]
        return "\n".join([inbox_block(shown), *notes])

    def _lead_ack(self, cursor: int) -> Callable[[], None]:
        def ack() -> None:
            if cursor > self.rt.mail.cursor(LEAD):  # also skips quarantined lines
                self.rt.mail.ack(LEAD, cursor)

        return ack

    def _warn(self, text: str) -> None:
        self.rt.events.emit(Notice(agent=LEAD, text=text, level="warning"))

    def _mismatch(self, msg: MailMessage) -> str | None:
        """Why a protocol message to the lead does not match its stored request (or None)."""
        if msg.type not in ("shutdown_response", "plan_approval_request"):
            return None
        try:
            req = self.rt.protocols.get(msg.request_id or "")
        except NotFound:
            return f"no request {msg.request_id}"
        except CorruptFile as exc:
            return f"cannot check it: {exc}"
        want = "shutdown" if msg.type == "shutdown_response" else "plan_approval"
        if req.kind != want:
            return f"request {req.id} is a {req.kind} request"
        if msg.type == "shutdown_response":
            if req.target != msg.sender or req.sender != LEAD:
                return f"request {req.id} was not sent to {msg.sender}"
            if req.status != "approved":
                return f"request {req.id} is {req.status}"
        elif req.sender != msg.sender:
            return f"request {req.id} came from {req.sender}"
        return None
