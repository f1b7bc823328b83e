"""Approvals across hosts: a teammate process on host-b asks, the human at the lead's
terminal (another process) answers through the database; deny, "always", cancel, no lead
attached, and two leads racing for the same requests (each answered exactly once)."""

from __future__ import annotations

import json
import multiprocessing
import threading
from pathlib import Path

import pytest
from support.pg_approvals import WAIT, Lead, ask_in_child, lead_in_child, shell_request

from agent_cli.permissions.audit import AuditLog
from agent_cli.permissions.broker import ApprovalAnswer
from agent_cli.permissions.gate import PermissionGate
from agent_cli.permissions.policy import PermissionPolicy
from agent_cli.pg.approvals import APPROVALS, RemoteBroker
from agent_cli.pg.db import Database
from agent_cli.pg.schema import ensure_schema
from agent_cli.tools.base import ToolContext
from agent_cli.tools.shell import shell_tool
from agent_cli.ui.approvals import approval_panel
from agent_cli.ui.style import render_str

SPAWN = multiprocessing.get_context("spawn")


@pytest.fixture
def db(pg_db: Database) -> Database:
    ensure_schema(pg_db, [APPROVALS])
    return pg_db


def allow(req):
    return ApprovalAnswer("allow_once")


def hold(req):
    return None


def row(db: Database, summary: str) -> tuple:
    rows = db.execute("SELECT state, decision, feedback, host, agent FROM approval_request "
                      "WHERE summary = %s", (summary,))
    assert len(rows) == 1, rows
    return rows[0]


def ask_in_thread(broker: RemoteBroker, command: str, cancel=None):
    out: list = []
    thread = threading.Thread(
        target=lambda: out.append(broker.ask(shell_request("alice", command), cancel)))
    thread.start()
    return thread, out


def test_a_question_from_another_process_is_answered_by_the_lead(db: Database) -> None:
    lead = Lead(db, allow)
    out = SPAWN.Queue()
    child = SPAWN.Process(target=ask_in_child, args=(db, "host-b", "alice", "npm test", out))
    try:
        child.start()
        assert out.get(timeout=WAIT) == ("allow_once", "", "human")
        child.join(WAIT)
        assert child.exitcode == 0
        [shown] = lead.human.shown
        assert (shown.agent, shown.host, shown.summary) == ("alice", "host-b", "npm test")
        assert row(db, "npm test")[:2] == ("answered", "allow_once")
    finally:
        child.kill()
        lead.close()


class RemoteTeammate:
    """A teammate's gate on host-b whose broker is the database."""

    def __init__(self, db: Database, workdir: Path) -> None:
        self.policy = PermissionPolicy(workdir)
        self.broker = RemoteBroker(db, "host-b", heartbeat_s=0.2)
        self.audit = AuditLog(workdir / ".team" / "audit.jsonl")
        self.gate = PermissionGate(self.policy, self.broker, self.audit)
        self.tool = shell_tool()
        self.ctx = ToolContext(agent="alice", workdir=workdir)

    def run(self, command: str):
        return self.gate.check(self.tool, self.tool.parse({"command": command}), self.ctx)


def test_a_denial_reaches_the_remote_gate_with_the_humans_words(db: Database,
                                                                 tmp_path: Path) -> None:
    lead = Lead(db, lambda req: ApprovalAnswer("deny", feedback="run make test instead"))
    mate = RemoteTeammate(db, tmp_path)
    try:
        decision = mate.run("make deploy")
        assert not decision.allowed and decision.feedback == "run make test instead"
        assert "run make test instead" in decision.message
        [line] = mate.audit.entries()
        assert line["agent"] == "alice" and line["decision"] == "deny"
        panel = render_str(approval_panel(lead.human.shown[0]), 120, False)
        assert "alice@host-b wants to run `make deploy`" in panel
        assert "from host host-b" in panel
        assert row(db, "make deploy")[:3] == ("answered", "deny", "run make test instead")
    finally:
        mate.broker.close()
        lead.close()


def test_always_saves_the_rule_in_the_leads_settings_and_the_teammate_stops_asking(
        db: Database, tmp_path: Path) -> None:
    lead_dir, mate_dir = tmp_path / "lead", tmp_path / "mate"
    lead_dir.mkdir()
    mate_dir.mkdir()
    lead_policy = PermissionPolicy(lead_dir)
    lead = Lead(db, lambda req: ApprovalAnswer("allow_always", save=True), policy=lead_policy)
    mate = RemoteTeammate(db, mate_dir)
    try:
        assert mate.run("npm test").allowed
        assert mate.run("npm test").source != "human"  # the session rule, not a question
        assert len(lead.human.shown) == 1
        saved = json.loads((lead_dir / ".agent-cli" / "settings.local.json").read_text())
        assert "Bash(npm test)" in saved["permissions"]["allow"]
        assert not (mate_dir / ".agent-cli" / "settings.local.json").exists()
    finally:
        mate.broker.close()
        lead.close()


def test_a_cancelled_question_leaves_the_leads_queue_and_is_never_answered(
        db: Database) -> None:
    lead = Lead(db, hold)
    broker = RemoteBroker(db, "host-b", heartbeat_s=0.2)
    cancel = threading.Event()
    thread, out = ask_in_thread(broker, "rm -rf build", cancel)
    try:
        [shown] = lead.human.wait_shown()
        cancel.set()
        thread.join(WAIT)
        assert out[0].decision == "deny" and out[0].source == "interrupted"
        assert "no longer waits for run `rm -rf build`" in lead.wait_notice("no longer waits")
        assert lead.broker.pending() == []
        assert not lead.broker.answer(shown.id, ApprovalAnswer("allow_once"))
        assert row(db, "rm -rf build")[:2] == ("withdrawn", None)
    finally:
        broker.close()
        lead.close()


def test_with_no_lead_attached_the_teammate_waits_visibly_until_one_answers(
        db: Database) -> None:
    lines: list[str] = []
    waiting = threading.Event()

    def on_status(line: str) -> None:
        lines.append(line)
        if "no lead is attached" in line:
            waiting.set()

    broker = RemoteBroker(db, "host-b", heartbeat_s=0.2, on_status=on_status)
    thread, out = ask_in_thread(broker, "npm publish")
    lead = None
    try:
        assert waiting.wait(WAIT)
        assert lines[0].startswith("alice is waiting for the lead to approve: run `npm publish`")
        assert not broker.ui_attached and thread.is_alive() and out == []
        assert broker.status() == lines[-1]
        assert row(db, "npm publish")[:2] == ("waiting", None)
        lead = Lead(db, allow)  # the lead comes back: the question reaches it
        thread.join(WAIT)
        assert out[0].decision == "allow_once" and broker.ui_attached
        assert lines[-1] == "" and broker.pending() == []
    finally:
        broker.close()
        if lead is not None:
            lead.close()


def test_two_leads_racing_answer_each_request_exactly_once(db: Database) -> None:
    here = Lead(db, allow)
    shown, stop = SPAWN.Queue(), SPAWN.Event()
    there = SPAWN.Process(target=lead_in_child, args=(db, "allow_once", "", shown, stop))
    there.start()
    broker = RemoteBroker(db, "host-b", heartbeat_s=0.2)
    commands = [f"make part{i}" for i in range(12)]
    try:
        asks = [ask_in_thread(broker, c) for c in commands]
        for thread, out in asks:
            thread.join(WAIT)
            assert out[0].decision == "allow_once"
        stop.set()
        there.join(WAIT)
        assert there.exitcode == 0
        elsewhere = []
        while not shown.empty():
            elsewhere.append(shown.get()[2])
        answered_here = [r.summary for r in here.human.shown]
        assert sorted(answered_here + elsewhere) == sorted(commands)
        states = db.execute("SELECT state, count(*) FROM approval_request GROUP BY state")
        assert states == [("answered", 12)]
    finally:
        stop.set()
        there.kill()
        broker.close()
        here.close()
