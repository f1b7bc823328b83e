"""Attack on protocol rows: a row whose columns (which the queries filter on) say one thing
and whose data (what the host acts on) says another is not a request: readers fail closed,
as for any row they cannot read, instead of a plan gate reading someone else's approval."""

from __future__ import annotations

import pytest

from agent_cli.errors import CorruptFile
from agent_cli.pg.db import Database
from agent_cli.pg.protocol import PgProtocolStore
from agent_cli.pg.schema import ensure_schema
from agent_cli.pg.team_schema import TEAM


@pytest.fixture
def store(pg_db: Database) -> PgProtocolStore:
    ensure_schema(pg_db, [TEAM])
    return PgProtocolStore(pg_db)


def plant(store: PgProtocolStore, columns: dict, data: str) -> None:
    store.db.execute(
        "INSERT INTO protocol_request (id, kind, sender, target, status, data) "
        "VALUES (%(id)s, %(kind)s, %(sender)s, %(target)s, %(status)s, %(data)s::jsonb)",
        {**columns, "data": data})


def test_an_approval_filed_under_another_sender_is_not_read_as_theirs(store) -> None:
    mine = store.create("plan_approval", "alice", "lead", "1. rm -rf build")
    bobs = mine.model_copy(update={"id": "forged", "sender": "bob", "status": "approved"})
    plant(store, {"id": "forged", "kind": "plan_approval", "sender": "alice",
                  "target": "lead", "status": "approved"}, bobs.model_dump_json())
    with pytest.raises(CorruptFile, match="protocol_request"):
        store.latest_plan("alice")  # the gate must not open on bob's approval


def test_a_pending_request_hidden_by_its_status_column_fails_closed(store) -> None:
    mine = store.create("shutdown", "lead", "alice", "")
    hidden = mine.model_copy(update={"id": "hidden"})
    plant(store, {"id": "hidden", "kind": "shutdown", "sender": "lead", "target": "alice",
                  "status": "approved"}, hidden.model_dump_json())
    with pytest.raises(CorruptFile):
        store.load()
    assert [r.id for r in store.pending(target="alice")] == [mine.id]  # the column rules
