"""Rows written by hand by anyone holding the database URL: a roster row that is not a
member is named in the snapshot and left out (the others still read), and is replaced by
the next add; a protocol row that is not a request fails readers closed (CorruptFile) and
refuses a response, logged, with nothing changed."""

from __future__ import annotations

import pytest

from agent_cli.errors import CorruptFile, Refused
from agent_cli.pg.db import Database
from agent_cli.pg.protocol import PgProtocolStore
from agent_cli.pg.roster import PgRoster
from agent_cli.pg.schema import ensure_schema
from agent_cli.pg.team_schema import TEAM


@pytest.fixture
def db(pg_db: Database) -> Database:
    ensure_schema(pg_db, [TEAM])
    return pg_db


@pytest.mark.parametrize("name, data", [
    ("mallory", '[1, 2]'),
    ("mallory", '{"role": "x", "status": "sleeping", "updated_at": "t"}'),
    ("../etc", '{"role": "x", "updated_at": "t"}'),
])
def test_a_roster_row_that_is_not_a_member_is_named_and_left_out(db, name, data) -> None:
    roster = PgRoster(db, "demo")
    roster.add("alice", "tester")
    db.execute("INSERT INTO roster_member (name, data) VALUES (%s, %s::jsonb)", (name, data))
    snap = roster.snapshot()
    assert [m.name for m in snap.members] == ["alice"]
    assert repr(name) in snap.problem and "roster_member" in snap.problem
    assert roster.get("alice").role == "tester"
    if name == "mallory":
        assert roster.get("mallory") is None
        roster.add("mallory", "reviewer")  # written again: a member like any other
        assert [m.name for m in roster.members()] == ["alice", "mallory"]
        assert roster.snapshot().problem is None


def test_an_unreachable_server_is_a_snapshots_problem_not_a_crash() -> None:
    roster = PgRoster(Database("postgresql://u:s3cret@127.0.0.1:1/db", "x",
                               connect_timeout_s=2), "demo")
    snap = roster.snapshot()
    assert snap.members == [] and "127.0.0.1" in snap.problem and "s3cret" not in snap.problem


def test_a_protocol_row_that_is_not_a_request_fails_readers_closed(db) -> None:
    store = PgProtocolStore(db)
    good = store.create("plan_approval", "alice", "lead", "1. x")
    db.execute("INSERT INTO protocol_request (id, kind, sender, target, status, data) "
               "VALUES ('bad', 'plan_approval', 'alice', 'lead', 'pending', "
               "'{\"id\": \"bad\", \"kind\": \"telepathy\"}'::jsonb)")
    with pytest.raises(CorruptFile, match="protocol_request"):
        store.latest_plan("alice")  # a plan gate must not open on what it cannot read
    with pytest.raises(CorruptFile):
        store.pending()
    with pytest.raises(Refused, match="cannot resolve bad"):
        store.resolve("bad", "plan_approval", "lead", "alice", True)
    assert store.get(good.id).status == "pending"
    assert store.log()[-1]["outcome"] == "rejected"
