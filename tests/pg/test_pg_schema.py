"""The team's schema on PostgreSQL: migrations applied once per component, even by two
processes at once; a schema from a newer agent-cli refused without a change; a bad URL or an
unreachable server is one line that never shows the password."""

from __future__ import annotations

import multiprocessing
import pickle

import pytest

from agent_cli.errors import StorageError, UserError
from agent_cli.pg.db import Database, check_url, mask_url, schema_for_team
from agent_cli.pg.schema import Component, ensure_schema, versions

WIDGETS = Component("widgets", (
    "CREATE TABLE widget (id serial PRIMARY KEY, name text NOT NULL)",
    "ALTER TABLE widget ADD COLUMN colour text",
))


def test_migrations_apply_in_order_and_once(pg_db: Database) -> None:
    ensure_schema(pg_db, [WIDGETS])
    ensure_schema(pg_db, [WIDGETS])
    assert versions(pg_db) == {"widgets": 2}
    pg_db.execute("INSERT INTO widget (name, colour) VALUES ('a', 'red')")
    assert pg_db.execute("SELECT name, colour FROM widget") == [("a", "red")]


def test_a_later_migration_is_applied_to_an_older_schema(pg_db: Database) -> None:
    ensure_schema(pg_db, [Component("widgets", WIDGETS.migrations[:1])])
    pg_db.execute("INSERT INTO widget (name) VALUES ('kept')")
    ensure_schema(pg_db, [WIDGETS])
    assert pg_db.execute("SELECT name, colour FROM widget") == [("kept", None)]


def test_a_newer_schema_is_refused_and_left_as_it_is(pg_db: Database) -> None:
    ensure_schema(pg_db, [WIDGETS])
    with pytest.raises(StorageError, match="version 2, this agent-cli knows up to 1"):
        ensure_schema(pg_db, [Component("widgets", WIDGETS.migrations[:1])])
    assert versions(pg_db) == {"widgets": 2}


def _ensure(db: Database) -> None:
    ensure_schema(db, [WIDGETS])


def test_two_processes_migrating_at_once_apply_each_version_once(pg_db: Database) -> None:
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_ensure, args=(pg_db,)) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    rows = pg_db.execute("SELECT component, version FROM schema_version ORDER BY version")
    assert rows == [("widgets", 1), ("widgets", 2)]


def test_a_database_travels_to_a_child_process_as_url_and_schema(pg_db: Database) -> None:
    copy = pickle.loads(pickle.dumps(pg_db))
    assert (copy.url, copy.schema) == (pg_db.url, pg_db.schema)
    assert copy.execute("SELECT 1") == [(1,)]
    copy.close()


def test_the_password_never_shows() -> None:
    assert mask_url("postgresql://u:s3cret@h:5/db") == "postgresql://u:***@h:5/db"
    with pytest.raises(UserError) as err:
        check_url("mysql://u:s3cret@h/db")
    assert "s3cret" not in str(err.value)
    db = Database("postgresql://u:s3cret@127.0.0.1:1/db", "x", connect_timeout_s=2)
    with pytest.raises(StorageError) as err:
        db.execute("SELECT 1")
    assert "s3cret" not in str(err.value) and "\n" not in str(err.value)


def test_a_team_names_its_schema() -> None:
    assert schema_for_team("my-team") == "agent_cli_my_team"
    with pytest.raises(UserError):
        schema_for_team("x" * 60)
