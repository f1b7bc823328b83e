"""Approvals across hosts in tests: a fake human at the lead's terminal, and the two sides
as child processes (multiprocessing spawn: each child opens its own Database)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from agent_cli.events import EventBus, Notice
from agent_cli.permissions.broker import ApprovalAnswer, ApprovalBroker, ApprovalRequest
from agent_cli.pg.approvals import APPROVALS, ApprovalBridge, RemoteBroker
from agent_cli.pg.db import Database
from agent_cli.pg.schema import ensure_schema

WAIT = 30.0  # seconds any wait in these tests may take before it fails
FAST = {"heartbeat_s": 0.2, "stale_s": 10.0}  # the bridge's timings in the tests
Decide = Callable[[ApprovalRequest], ApprovalAnswer | None]


class FakeLead:
    """The human at the lead's terminal: attaches to `broker` and answers each request
    with `decide(req)` (None: leaves it on screen, unanswered). `shown` lists what was
    shown, in order; `seen` is set at each new one."""

    def __init__(self, broker: ApprovalBroker, decide: Decide) -> None:
        self.broker = broker
        self.decide = decide
        self.shown: list[ApprovalRequest] = []
        self.seen = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="fake lead")

    def start(self) -> FakeLead:
        self.broker.attach_ui()
        self._thread.start()
        return self

    def _run(self) -> None:
        current = None
        while not self._stop.is_set():
            req = self.broker.next_request(0.05)
            if req is None or req is current:
                continue
            current = req
            self.shown.append(req)
            self.seen.set()
            answer = self.decide(req)
            if answer is not None:
                self.broker.answer(req.id, answer)

    def wait_shown(self, count: int = 1) -> list[ApprovalRequest]:
        """Block until `count` requests were shown (fails the test after WAIT)."""
        while len(self.shown) < count:
            assert self.seen.wait(WAIT), f"only {len(self.shown)} request(s) reached the lead"
            self.seen.clear()
        return self.shown

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(WAIT)


class Lead:
    """A lead's process side in one object: broker, fake human, bridge, notices."""

    def __init__(self, db: Database, decide: Decide, **bridge_kw: Any) -> None:
        self.broker = ApprovalBroker()
        self.events = EventBus()
        self.notices: list[str] = []
        self.noticed = threading.Event()
        self.events.subscribe(self._on_event)
        self.human = FakeLead(self.broker, decide).start()
        kw = {**FAST, **bridge_kw}
        self.bridge = ApprovalBridge(db, self.broker, host="host-a", emit=self.events.emit,
                                     **kw).start()

    def _on_event(self, event: Any) -> None:
        if isinstance(event, Notice):
            self.notices.append(event.text)
            self.noticed.set()

    def wait_notice(self, part: str) -> str:
        while True:
            found = [n for n in self.notices if part in n]
            if found:
                return found[0]
            assert self.noticed.wait(WAIT), f"no notice with {part!r}: {self.notices}"
            self.noticed.clear()

    def close(self) -> None:
        self.bridge.close()
        self.human.stop()
        self.broker.detach_ui()


def shell_request(agent: str, command: str) -> ApprovalRequest:
    return ApprovalRequest(agent=agent, tool="shell", input={"command": command},
                           summary=command, preview=command, suggested_rule=f"Bash({command})")


def ask_in_child(db: Database, host: str, agent: str, command: str, out: Any,
                 asking: Any = None) -> None:
    """A teammate process on `host`: asks once, puts (decision, feedback, source) in `out`.
    `asking` (an Event) is set once its question is in the database."""
    def on_status(line: str) -> None:
        if line and asking is not None:
            asking.set()

    broker = RemoteBroker(db, host, heartbeat_s=0.2, on_status=on_status)
    answer = broker.ask(shell_request(agent, command))
    out.put((answer.decision, answer.feedback, answer.source))
    broker.close()
    db.close()


def lead_in_child(db: Database, decision: str, feedback: str, shown: Any, stop: Any) -> None:
    """A lead process: answers every request `decision` (with `feedback`; "" leaves it
    unanswered), reports what it showed in `shown` as (agent, host, summary), runs until
    `stop` is set."""
    def decide(req: ApprovalRequest) -> ApprovalAnswer | None:
        shown.put((req.agent, req.host, req.summary))
        if not decision:
            return None
        return ApprovalAnswer(decision, feedback=feedback)  # type: ignore[arg-type]

    ensure_schema(db, [APPROVALS])
    lead = Lead(db, decide)
    stop.wait(WAIT * 4)
    lead.close()
    db.close()


def claim_all(db: Database, lead: str, ready: Any, out: Any) -> None:
    """A lead process claiming every waiting request as fast as it can, once all are
    `ready` (a Barrier); the keys it got go to `out`."""
    from agent_cli.pg.approval_queue import ApprovalQueue

    queue = ApprovalQueue(db)
    db.execute("SELECT 1")  # connected before the start line
    ready.wait(WAIT)
    got = []
    while (claimed := queue.claim_next(lead, 600)) is not None:
        got.append(claimed.key)
    out.put(got)
    db.close()


def terminate(db: Database, app: str) -> int:
    """pg_terminate_backend on every connection tagged `app` (PGAPPNAME): how many."""
    rows = db.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                      "WHERE application_name = %s AND pid <> pg_backend_pid()", (app,))
    return int(rows[0][0])
