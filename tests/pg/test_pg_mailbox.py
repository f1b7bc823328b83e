"""The PostgreSQL mailbox beyond the shared contract: senders in several processes and a
reader SIGKILLed between fetch and ack (every message taken in exactly once, none lost), a
resent id stored once, a hand-written bad row quarantined once, and every change notified
in its own transaction."""

from __future__ import annotations

import multiprocessing
import random
import signal
import subprocess
import sys

import psycopg
import pytest
from psycopg import sql
from support.race import env
from support.team_backends import OPEN

from agent_cli.pg.db import Database
from agent_cli.pg.mailbox import PgMailbox
from agent_cli.pg.schema import ensure_schema
from agent_cli.pg.team_schema import TEAM
from agent_cli.team.mailbox import build_message

WAIT = 60.0


@pytest.fixture
def db(pg_db: Database) -> Database:
    ensure_schema(pg_db, [TEAM])
    return pg_db


def _send_many(db: Database, who: str, n: int) -> None:
    mail = PgMailbox(db)
    for i in range(n):
        mail.send(who, "lead", f"{who}:{i}")
    db.close()


# Takes in the lead's inbox: fetch, mark the fresh messages delivered (its durable taking
# in), ack; each step reported once done. It SIGKILLs itself right after the step named by
# argv[2] ("got": fetched, nothing recorded; "marked": taken in, not acknowledged).
READER = OPEN + """
import os, signal, sys
mail = stores(sys.argv[1])[0]
die = sys.argv[2]
while True:
    got = mail.fetch("lead")
    if got.problems:
        print("problem", *got.problems, flush=True)
    ids = [m.id for m in got.messages]
    print("got", *ids, flush=True)
    if die == "got":
        os.kill(os.getpid(), signal.SIGKILL)
    mail.mark_delivered("lead", ids)
    print("marked", *ids, flush=True)
    if die == "marked":
        os.kill(os.getpid(), signal.SIGKILL)
    mail.ack("lead", got.cursor)
"""


def _reader(spec: str, die: str) -> list[list[str]]:
    """Run READER until it kills itself after step `die`; its reports."""
    proc = subprocess.run([sys.executable, "-c", READER, spec, die], capture_output=True,
                          text=True, env=env(), timeout=WAIT)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    return [line.split() for line in proc.stdout.splitlines()]


def test_n_senders_and_a_reader_killed_between_fetch_and_ack_take_in_each_once(db) -> None:
    spec = f"postgresql:{db.url}#{db.schema}"
    ctx = multiprocessing.get_context("spawn")
    n, senders = 60, [f"s{i}" for i in range(4)]
    procs = [ctx.Process(target=_send_many, args=(db, who, n)) for who in senders]
    for p in procs:
        p.start()
    mail = PgMailbox(db)
    rng = random.Random(2323)
    marked: set[str] = set()
    fetched: set[str] = set()
    redelivered = 0
    for round_no in range(12):
        mail.send("lead", "lead", f"parent:{round_no}")  # never an empty inbox to read
        for report in _reader(spec, rng.choice(["got", "marked"])):
            assert report[0] != "problem", report
            if report[0] == "got":
                # a message once taken in is never handed over again, in any process
                assert not marked & set(report[1:]), "redelivered after being taken in"
                redelivered += bool(fetched & set(report[1:]))
                fetched |= set(report[1:])
            elif report[0] == "marked":
                marked |= set(report[1:])
    assert redelivered  # fetched, killed before the ack: handed over again
    for p in procs:
        p.join(WAIT)
        assert p.exitcode == 0
    rest = mail.fetch("lead")  # the last reader: what no killed one took in
    assert not marked & {m.id for m in rest.messages}
    mail.mark_delivered("lead", [m.id for m in rest.messages])
    mail.ack("lead", rest.cursor)
    stored = db.execute("SELECT id, body->>'content' FROM inbox_message "
                        "WHERE inbox = 'lead' ORDER BY seq")
    assert len(stored) == n * len(senders) + 12
    assert {i for i, _ in stored} == mail.delivered("lead")  # none lost
    for who in senders:  # each sender's messages in its order
        mine = [int(c.split(":")[1]) for _, c in stored if c.startswith(f"{who}:")]
        assert mine == list(range(n))
    assert mail.peek("lead") == []


def test_a_message_resent_with_its_id_is_stored_once(db) -> None:
    mail = PgMailbox(db)
    msg = mail.send("lead", "alice", "once")
    assert mail.append(msg) is False  # a retry after a lost commit answer, a migration
    copy = build_message("lead", "alice", "copied")
    assert mail.append(copy) is True
    assert [m.id for m in mail.peek("alice")] == [msg.id, copy.id]
    assert mail.stamp("alice") == (2, 0)  # the refused resend took no number


def test_ids_marked_delivered_are_dropped_from_a_redelivery(db) -> None:
    mail = PgMailbox(db)
    first = mail.send("lead", "alice", "one")
    mail.send("lead", "alice", "two")
    got = mail.fetch("alice")
    assert mail.unread("alice") == 2
    mail.mark_delivered("alice", [first.id])  # taken in, then the reader died before ack
    assert mail.unread("alice") == 1 and mail.delivered("alice") == {first.id}
    again = PgMailbox(db).fetch("alice")
    assert [m.content for m in again.messages] == ["two"]
    assert again.cursor == got.cursor  # the cursor still passes the dropped one
    mail.ack("alice", again.cursor)
    assert mail.fetch("alice").messages == [] and mail.unread("alice") == 0


def test_a_hand_written_bad_row_is_quarantined_once_and_the_rest_delivers(db) -> None:
    mail = PgMailbox(db)
    mail.send("lead", "alice", "before")
    with db.transaction() as conn:  # someone with the database URL writes rows by hand
        for i, body in enumerate(['{"id": "x1", "type": "telepathy"}',
                                  '{"id": "x2", "type": "message", "from": "lead", '
                                  '"to": "bob", "content": "", "ts": "t"}']):
            conn.execute("UPDATE inbox_head SET last_seq = last_seq + 1 WHERE inbox = 'alice'")
            conn.execute("INSERT INTO inbox_message (inbox, seq, id, body) VALUES "
                         "('alice', %s, %s, %s::jsonb)", (2 + i, f"x{i}", body))
    mail.send("lead", "alice", "after")
    got = mail.fetch("alice")
    assert [m.content for m in got.messages] == ["before", "after"]
    assert len(got.problems) == 2 and "number 3" in got.problems[1]
    assert "addressed to 'bob'" in got.problems[1]
    assert mail.fetch("alice").problems == []  # once
    records = mail.quarantined("alice")
    assert [r["seq"] for r in records] == [2, 3] and '"telepathy"' in records[0]["line"]
    mail.ack("alice", got.cursor)
    assert mail.fetch("alice").messages == [] and mail.cursor("alice") == 4


def _notices(db: Database) -> psycopg.Connection:
    conn = psycopg.connect(db.url, autocommit=True)
    conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(db.channel)))
    return conn


def _payloads(conn: psycopg.Connection) -> list[str]:
    return [n.payload for n in conn.notifies(timeout=0.5)]


def test_every_change_notifies_the_team_channel_and_a_refusal_does_not(db) -> None:
    listen = _notices(db)
    try:
        mail = PgMailbox(db)
        msg = mail.send("lead", "alice", "hi")
        mail.append(msg)  # refused: no change
        mail.ack("alice", mail.fetch("alice").cursor)
        mail.ack("alice", 0)  # backwards: no change
        assert _payloads(listen) == ["inbox:alice", "cursor:alice"]
    finally:
        listen.close()
