"""The LISTEN wake-up: another process's change wakes this one's waiter, a terminated LISTEN
connection (or a server that went away) is reconnected with `notify()` called once it is
back (changes may have been missed), and close() ends the thread at once, even mid-backoff."""

from __future__ import annotations

import multiprocessing

import pytest
from support.pg import NotifyCounter

from agent_cli.pg.db import Database
from agent_cli.pg.listen import Listener
from agent_cli.pg.mailbox import PgMailbox
from agent_cli.pg.schema import ensure_schema
from agent_cli.pg.team_schema import TEAM
from agent_cli.wakeup import ChangeSignal

WAIT = 30.0


@pytest.fixture
def db(pg_db: Database) -> Database:
    ensure_schema(pg_db, [TEAM])
    return pg_db


def _send(db: Database, text: str) -> None:
    PgMailbox(db).send("bob", "alice", text)
    db.close()


def test_a_change_in_another_process_wakes_a_waiting_thread(db) -> None:
    signal = ChangeSignal()
    listener = Listener(db, signal.notify)
    assert listener.start()
    mail = PgMailbox(db)
    before = mail.stamp("alice")
    try:
        gen = signal.generation
        proc = multiprocessing.get_context("spawn").Process(target=_send, args=(db, "hi"))
        proc.start()
        assert signal.wait(gen, WAIT) != gen  # woken, not timed out
        proc.join(WAIT)
        assert proc.exitcode == 0
        assert mail.stamp("alice") != before
        assert [m.content for m in mail.peek("alice")] == ["hi"]
    finally:
        listener.close()


def test_a_terminated_listen_connection_comes_back_and_says_so(db) -> None:
    counter = NotifyCounter(WAIT)
    listener = Listener(db, counter)
    assert listener.start()
    try:
        pid = listener._conn.info.backend_pid
        (killed,) = db.execute("SELECT pg_terminate_backend(%s)", (pid,))[0]
        assert killed
        assert counter.wait_beyond(0)  # reconnected: notified once, changes may be lost
        assert listener.reconnects == 1 and listener.connected.is_set()
        calls = counter.calls
        PgMailbox(db).send("bob", "alice", "after the reconnect")
        assert counter.wait_beyond(calls)  # and it listens again
        (new_pid,) = db.execute(
            "SELECT pid FROM pg_stat_activity WHERE query ILIKE 'LISTEN%%' "
            "AND pid <> %s", (pid,))[0]
        assert new_pid == listener._conn.info.backend_pid
    finally:
        listener.close()


def test_close_ends_the_thread_at_once_even_while_waiting_to_reconnect(db) -> None:
    listener = Listener(db, NotifyCounter(WAIT))
    assert listener.start()
    thread = listener._thread
    listener.close(timeout=WAIT)
    assert not thread.is_alive()
    gone = Listener(Database("postgresql://postgres@127.0.0.1:1/x", "s",
                             connect_timeout_s=1), NotifyCounter(WAIT))
    assert gone.start() is False  # no server: the thread keeps trying with backoff
    thread = gone._thread
    assert thread.is_alive()
    gone.close(timeout=WAIT)
    assert not thread.is_alive()
    gone.close()  # twice is harmless


def test_each_store_notifies_its_changes_and_a_heartbeat_wakes_nobody(db) -> None:
    import psycopg
    from psycopg import sql

    from agent_cli.pg.protocol import PgProtocolStore
    from agent_cli.pg.roster import PgRoster

    listen = psycopg.connect(db.url, autocommit=True)
    listen.execute(sql.SQL("LISTEN {}").format(sql.Identifier(db.channel)))
    try:
        roster, protocols = PgRoster(db, "demo"), PgProtocolStore(db)
        roster.add_running("alice", "coder")
        roster.heartbeat(["alice"])
        req = protocols.create("shutdown", "lead", "alice")
        protocols.resolve(req.id, "shutdown", "alice", "lead", True, response_id="m1")
        with pytest.raises(Exception, match="already approved"):
            protocols.resolve(req.id, "shutdown", "alice", "lead", False, response_id="m2")
        got = [n.payload for n in listen.notifies(timeout=0.5)]
        assert got == ["roster:alice", "protocol", "protocol"]
    finally:
        listen.close()
