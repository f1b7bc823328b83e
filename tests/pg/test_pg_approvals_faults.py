"""Approvals across hosts when things break: an asker SIGKILLed while the lead shows its
question, a lead SIGKILLed holding one, connections dropped by the server, many leads
claiming at once, and requests a hostile host wrote into the queue."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import uuid
from collections.abc import Iterator

import psycopg
import pytest
from psycopg import sql
from support.pg_approvals import (
    WAIT,
    Lead,
    ask_in_child,
    claim_all,
    lead_in_child,
    shell_request,
    terminate,
)

from agent_cli.permissions.audit import AuditLog
from agent_cli.permissions.broker import ApprovalAnswer, ApprovalRequest
from agent_cli.permissions.gate import PermissionGate
from agent_cli.permissions.policy import PermissionPolicy
from agent_cli.pg.approval_queue import ApprovalQueue
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


def hold(req):
    return None


def ask_in_thread(broker: RemoteBroker, command: str):
    out: list = []
    thread = threading.Thread(target=lambda: out.append(broker.ask(
        shell_request("alice", command))))
    thread.start()
    return thread, out


def test_a_sigkilled_asker_is_withdrawn_from_the_leads_queue(db: Database) -> None:
    lead = Lead(db, hold, stale_s=1.5)
    out, asking = SPAWN.Queue(), SPAWN.Event()
    child = SPAWN.Process(target=ask_in_child,
                          args=(db, "host-b", "alice", "make migrate", out, asking))
    try:
        child.start()
        [shown] = lead.human.wait_shown()
        os.kill(child.pid, signal.SIGKILL)
        child.join(WAIT)
        assert "alice@host-b no longer waits for run `make migrate`" in \
            lead.wait_notice("no longer waits")
        assert lead.broker.pending() == []
        assert not lead.broker.answer(shown.id, ApprovalAnswer("allow_once"))
        [(state, decision, why)] = db.execute(
            "SELECT state, decision, why_withdrawn FROM approval_request")
        assert (state, decision) == ("withdrawn", None) and "stopped answering" in why
    finally:
        child.kill()
        lead.close()


def test_a_question_held_by_a_sigkilled_lead_goes_to_another_lead(db: Database) -> None:
    shown, stop = SPAWN.Queue(), SPAWN.Event()
    first = SPAWN.Process(target=lead_in_child, args=(db, "", "", shown, stop))
    broker = RemoteBroker(db, "host-b", heartbeat_s=0.2)
    thread, out = ask_in_thread(broker, "make release")
    second = None
    try:
        first.start()
        assert shown.get(timeout=WAIT) == ("alice", "host-b", "make release")
        os.kill(first.pid, signal.SIGKILL)
        first.join(WAIT)
        second = Lead(db, lambda req: ApprovalAnswer("allow_once"), stale_s=1.5)
        thread.join(WAIT)
        assert out[0].decision == "allow_once"
        [(state, by)] = db.execute("SELECT state, claimed_by FROM approval_request")
        assert (state, by) == ("answered", second.bridge.lead)
    finally:  # never `stop.set()`: a waiter SIGKILLed inside Event.wait blocks set() forever
        first.kill()
        broker.close()
        if second is not None:
            second.close()


class StatusLines:
    """What a RemoteBroker says to its terminal, with a wait for a line."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._cond = threading.Condition()

    def __call__(self, line: str) -> None:
        with self._cond:
            self.lines.append(line)
            self._cond.notify_all()

    def wait_for(self, test, after: int = 0) -> int:
        """Block until a line from index `after` on passes `test`; its index."""
        def found():
            return next((i for i in range(after, len(self.lines)) if test(self.lines[i])),
                        None)
        with self._cond:
            assert self._cond.wait_for(lambda: found() is not None, WAIT), self.lines
            return found()


def test_dropped_connections_lose_no_question_and_answer_it_once(
        pg_cluster, pg_schema: str, monkeypatch: pytest.MonkeyPatch) -> None:
    app = "acli-" + uuid.uuid4().hex[:12]
    monkeypatch.setenv("PGAPPNAME", app)  # libpq tags every connection this test makes
    db, admin = Database(pg_cluster.url, pg_schema), Database(pg_cluster.url, pg_schema)
    ensure_schema(admin, [APPROVALS])
    status = StatusLines()
    broker = RemoteBroker(db, "host-b", heartbeat_s=0.2, on_status=status)
    thread, out = ask_in_thread(broker, "make release")
    lead = None
    try:
        status.wait_for(lambda line: "no lead is attached" in line)
        # the asker's connection and its LISTEN: an idle connection the server ended is
        # remade at its next use (Database.conn), so the question simply stays asked
        assert terminate(admin, app) >= 1
        lead = Lead(db, hold)
        [shown] = lead.human.wait_shown()
        assert terminate(admin, app) >= 2  # both sides
        assert lead.broker.answer(shown.id, ApprovalAnswer("allow_once"))
        thread.join(WAIT)
        assert out[0].decision == "allow_once"
        assert len(lead.human.shown) == 1
        assert admin.execute("SELECT state, decision FROM approval_request") == [
            ("answered", "allow_once")]
    finally:
        broker.close()
        if lead is not None:
            lead.close()
        db.close()
        admin.close()


@pytest.fixture
def own_database(pg_cluster) -> Iterator[tuple[str, Database]]:
    """A database of this test's own (URL) and a Database on the cluster's main one."""
    if os.environ.get("AGENT_CLI_TEST_PG_URL"):
        pytest.skip("creates and closes a database: throwaway cluster only")
    name = "acli_" + uuid.uuid4().hex[:12]
    admin = Database(pg_cluster.url, "public")
    admin.conn().execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    yield pg_cluster.url.rsplit("/", 1)[0] + "/" + name, admin
    admin.conn().execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(
        sql.Identifier(name)))
    admin.close()


def test_a_server_closed_to_connections_for_a_while_loses_nothing(
        own_database, monkeypatch: pytest.MonkeyPatch) -> None:
    url, admin = own_database
    app = "acli-" + uuid.uuid4().hex[:12]
    monkeypatch.setenv("PGAPPNAME", app)
    db = Database(url, "team_x")
    ensure_schema(db, [APPROVALS])
    status = StatusLines()
    broker = RemoteBroker(db, "host-b", heartbeat_s=0.2, on_status=status)
    thread, out = ask_in_thread(broker, "make release")
    lead = Lead(db, hold)
    closed = sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS {}")
    name = sql.Identifier(url.rsplit("/", 1)[1])
    try:
        [shown] = lead.human.wait_shown()
        admin.execute(closed.format(name, sql.SQL("false")))
        try:  # as a restart looks from here: every connection cut, none accepted
            terminate(admin, app)
            status.wait_for(lambda line: "the database is unreachable" in line)
            lead.wait_notice("approvals from other hosts wait")
            assert lead.broker.answer(shown.id, ApprovalAnswer("allow_once"))
        finally:
            admin.execute(closed.format(name, sql.SQL("true")))
        thread.join(WAIT)
        assert out[0].decision == "allow_once"
        assert len(lead.human.shown) == 1
        check = Database(url, "team_x")  # this thread's connection was cut too
        assert check.execute("SELECT state, decision FROM approval_request") == [
            ("answered", "allow_once")]
        check.close()
    finally:
        broker.close()
        lead.close()
        db.close()


def test_a_lead_whose_terminal_closes_gives_its_question_back(db: Database) -> None:
    status = StatusLines()
    broker = RemoteBroker(db, "host-b", heartbeat_s=0.2, on_status=status)
    thread, out = ask_in_thread(broker, "make release")
    lead = Lead(db, hold)
    try:
        lead.human.wait_shown()
        seen = status.wait_for(lambda line: line.endswith("`make release`"))  # a lead is here
        lead.broker.detach_ui()  # the REPL ends; the bridge still runs
        status.wait_for(lambda line: "no lead is attached" in line, after=seen)
        assert db.execute("SELECT state, claimed_by FROM approval_request") == [
            ("waiting", None)]
        assert thread.is_alive() and out == [] and not broker.ui_attached
    finally:
        broker.close()
        thread.join(WAIT)
        lead.close()
    assert out[0].source == "closed"


def test_leads_claiming_at_once_take_each_request_exactly_once(db: Database) -> None:
    queue = ApprovalQueue(db)
    keys = [f"k{i:03}" for i in range(300)]
    for key in keys:
        queue.insert(key, "host-b", shell_request("alice", f"make {key}"))
    ready, out = SPAWN.Barrier(4), SPAWN.Queue()
    procs = [SPAWN.Process(target=claim_all, args=(db, f"lead{i}", ready, out))
             for i in range(4)]
    for p in procs:
        p.start()
    got = [out.get(timeout=WAIT * 2) for _ in procs]
    for p in procs:
        p.join(WAIT)
    claimed = [k for part in got for k in part]
    assert sorted(claimed) == keys  # every one claimed, none twice


def test_a_request_locked_for_a_moment_when_the_lead_looked_is_still_shown(
        pg_cluster, db: Database) -> None:
    ApprovalQueue(db).insert("k1", "host-b", shell_request("alice", "make x"))
    missed = threading.Event()
    lead = Lead(db, hold, heartbeat_s=600)  # no heartbeat would save it in time
    try:
        claim = lead.bridge.queue.claim_next

        def watched(*args):
            row = claim(*args)
            if row is None:
                missed.set()
            return row

        lead.bridge.queue.claim_next = watched
        with psycopg.connect(pg_cluster.url, autocommit=True) as other:
            with other.transaction():  # an asker's heartbeat, another lead's claim ...
                other.execute(sql.SQL("SELECT 1 FROM {}.approval_request FOR UPDATE")
                              .format(sql.Identifier(db.schema)))
                assert missed.wait(WAIT)  # the lead looked and SKIP LOCKED passed it by
        [shown] = lead.human.wait_shown()  # no NOTIFY came after the lock went
        assert shown.summary == "make x"
    finally:
        lead.close()


def test_an_answer_after_another_lead_took_the_claim_is_not_written(db: Database) -> None:
    queue = ApprovalQueue(db)
    queue.insert("k1", "host-b", shell_request("alice", "make x"))
    assert queue.claim_next("lead-a", 60).key == "k1"
    db.execute("UPDATE approval_request SET state = 'waiting', claimed_by = NULL")  # a sweep
    assert queue.claim_next("lead-b", 60).key == "k1"
    assert not queue.answer("k1", "lead-a", ApprovalAnswer("allow_once"))
    assert queue.answer("k1", "lead-b", ApprovalAnswer("deny", feedback="no"))
    assert not queue.answer("k1", "lead-a", ApprovalAnswer("allow_once"))
    assert db.execute("SELECT decision, feedback FROM approval_request") == [("deny", "no")]


def plant(db: Database, key: str, agent: str, host: str, summary: str, rule: str) -> None:
    """A row written by hand, as a hostile host could."""
    db.execute("INSERT INTO approval_request (key, agent, host, tool, summary, preview, "
               "suggested_rule) VALUES (%s, %s, %s, 'shell', %s, %s, %s)",
               (key, agent, host, summary, summary, rule))


def test_a_hostile_hosts_requests_are_refused_or_shown_as_data(db: Database) -> None:
    plant(db, "bad-agent", "lead\x1b]0;owned\x07", "host-b", "ls", "")
    plant(db, "bad-host", "alice", "host-b\x1b[2J", "ls", "")
    db.execute("INSERT INTO approval_request (key, agent, host, tool) VALUES "
               "('bad-tool', 'alice', 'host-b', 'shell\x1b[2J')")
    plant(db, "wide-rule", "alice", "host-c", "ls", "Bash(*)")  # last: shown once all
    # the others were refused (the bridge takes them oldest first, on one thread)
    lead = Lead(db, hold)
    try:
        [shown] = lead.human.wait_shown()
        assert (shown.agent, shown.host, shown.suggested_rule) == ("alice", "host-c", "")
        assert "Yes (no rule can cover this" in render_str(approval_panel(shown), 120, False)
        refused = dict((k, (s, d, src)) for k, s, d, src in db.execute(
            "SELECT key, state, decision, source FROM approval_request"))
        assert refused["bad-agent"] == refused["bad-host"] == refused["bad-tool"] == (
            "answered", "deny", "refused")
        notice = lead.wait_notice("was refused")
        assert "\x1b" not in "".join(lead.notices) and "\\x1b" in notice
    finally:
        lead.close()


def test_a_question_with_a_nul_is_refused_before_it_reaches_the_database(
        db: Database, tmp_path) -> None:
    broker = RemoteBroker(db, "host-b")
    answer = broker.ask(ApprovalRequest(agent="alice", tool="shell",
                                        input={"command": "echo a\x00b"}, summary="echo a"))
    assert (answer.decision, answer.source) == ("deny", "refused")
    assert "NUL" in answer.feedback
    gate = PermissionGate(PermissionPolicy(tmp_path), broker,
                          AuditLog(tmp_path / "audit.jsonl"))
    shell = shell_tool()
    decision = gate.check(shell, shell.parse({"command": "printf 'a\x00b'"}),
                          ToolContext(agent="alice", workdir=tmp_path))
    assert decision.message.startswith("Denied without asking: Not asked: it contains a NUL")
    assert db.execute("SELECT count(*) FROM approval_request") == [(0,)]
