"""Attacks through names: two team names that map to one schema (`red-team`, `red_team`)
never share a board; names and text that look like SQL or carry escapes are data."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import psycopg
import pytest
from psycopg import sql

from agent_cli.errors import UserError
from agent_cli.pg.db import schema_for_team
from agent_cli.pg.stores import open_database, open_pg_stores


@pytest.fixture
def team_pair(pg_cluster) -> Iterator[tuple[str, str]]:
    """Two valid team names sharing one schema name; the schema dropped at the end."""
    stem = "t" + uuid.uuid4().hex[:12]
    pair = (stem + "-red", stem + "_red")
    yield pair
    with psycopg.connect(pg_cluster.url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(
            sql.Identifier(schema_for_team(pair[0]))))


def test_a_team_whose_name_maps_to_anothers_schema_is_refused(pg_cluster, team_pair) -> None:
    first, second = team_pair
    assert schema_for_team(first) == schema_for_team(second)
    stores = open_pg_stores(pg_cluster.url, first)
    try:
        stores.board.create("first team's task")
    finally:
        stores.close()
    with pytest.raises(UserError) as err:
        open_pg_stores(pg_cluster.url, second)
    text = str(err.value)
    assert repr(first) in text and repr(second) in text and "\n" not in text
    again = open_pg_stores(pg_cluster.url, first)  # the first team is untouched
    try:
        assert [t.subject for t in again.board.snapshot().tasks] == ["first team's task"]
    finally:
        again.close()


def test_the_first_team_to_open_a_schema_owns_it(pg_cluster, team_pair) -> None:
    first, second = team_pair
    open_database(pg_cluster.url, second).close()
    with pytest.raises(UserError, match="belongs to team"):
        open_database(pg_cluster.url, first)
    open_database(pg_cluster.url, second).close()  # and it keeps opening


def test_a_message_with_a_nul_is_refused_in_words_and_nothing_is_sent(pg_cluster,
                                                                       team_pair) -> None:
    """PostgreSQL's jsonb cannot hold U+0000 or a lone surrogate: the sender is told so in
    plain words (not the server's 'unsupported Unicode escape sequence' or a
    UnicodeEncodeError); nothing is stored; SQL-looking and 10 MB text is stored as sent."""
    from agent_cli.errors import Refused

    stores = open_pg_stores(pg_cluster.url, team_pair[0])
    try:
        with pytest.raises(Refused, match="NUL") as err:
            stores.mail.send("alice", "lead", "before\x00after")
        assert "\n" not in str(err.value)
        with pytest.raises(Refused, match="lone surrogate"):  # JSON's "\ud800" decodes so
            stores.mail.send("alice", "lead", "half a pair: \ud800")
        assert stores.database.execute("SELECT count(*) FROM inbox_message") == [(0,)]
        odd = "'); DROP TABLE inbox_message; --" + "x" * 10_000_000
        stores.mail.send("alice", "lead", odd)
        [msg] = stores.mail.fetch("lead").messages
        assert msg.content == odd
    finally:
        stores.close()
