"""AGENT_CLI_HEARTBEAT_STALE_S: how old a member's heartbeat may get before it is gone (and
how often heartbeats are written: a third of it)."""

from __future__ import annotations

import pytest

pytest.importorskip("psycopg")

from agent_cli.errors import UserError  # noqa: E402
from agent_cli.pg.roster import STALE_S, PgRoster, stale_from_env  # noqa: E402


def test_the_variable_sets_the_staleness_and_a_bad_value_names_it():
    assert stale_from_env({}) == STALE_S == 45.0
    assert stale_from_env({"AGENT_CLI_HEARTBEAT_STALE_S": "3"}) == 3.0
    for bad in ("soon", "0", "-1", "inf"):
        with pytest.raises(UserError, match="^AGENT_CLI_HEARTBEAT_STALE_S: "):
            stale_from_env({"AGENT_CLI_HEARTBEAT_STALE_S": bad})


def test_a_member_silent_longer_than_the_staleness_is_gone(pg_db):
    from agent_cli.pg.schema import ensure_schema
    from agent_cli.pg.team_schema import TEAM

    ensure_schema(pg_db, [TEAM])
    roster = PgRoster(pg_db, stale_s=3)
    member = roster.add_running("bob", "teammate")
    old = member.model_copy(update={"pid": member.pid + 1, "heartbeat_age_s": 3.5})
    assert roster.gone_reason(old) == "no heartbeat for 3 s"
    fresh = old.model_copy(update={"heartbeat_age_s": 2.5})
    assert roster.gone_reason(fresh) is None
