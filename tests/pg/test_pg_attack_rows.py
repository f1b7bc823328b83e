"""Another host's rows are data: text written into the database by hand (bypassing every
check of the host that normally writes it) is shown escaped by `tasks list` and `team`, and
a blocked task whose counter was forged to look free is still not claimed."""

from __future__ import annotations

import psycopg
import pytest
from psycopg import sql

from agent_cli.cli import main
from agent_cli.errors import Refused
from agent_cli.pg.stores import open_pg_stores

EVIL = "evil\x1b]0;pwned\x07\x1b[2J\nforged: line\u202e"


@pytest.fixture
def team(pg_cluster):
    """The default team's stores on the session's server (what `--board URL` opens), its
    schema dropped at the end."""
    stores = open_pg_stores(pg_cluster.url, "default")
    yield stores
    stores.close()
    with psycopg.connect(pg_cluster.url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS agent_cli_default CASCADE"))


def shown(capsys, workdir, url: str, *argv: str) -> str:
    code = main(["-C", str(workdir), "--board", url, *argv])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out + err


def test_a_hand_written_subject_is_shown_escaped(team, pg_cluster, workdir, capsys) -> None:
    team.board.create("honest")
    team.database.execute("UPDATE board_task SET subject = %s", (EVIL,))
    text = shown(capsys, workdir, pg_cluster.url, "tasks", "list")
    assert "evil" in text
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    assert "\nforged: line" not in text


def test_a_hand_written_host_and_role_are_shown_escaped(team, pg_cluster, workdir,
                                                       capsys) -> None:
    team.roster.add("alice", "tester")
    team.database.execute(
        "UPDATE roster_member SET data = data || jsonb_build_object('host', %s::text, "
        "'role', %s::text) WHERE name = 'alice'", (EVIL, EVIL))
    text = shown(capsys, workdir, pg_cluster.url, "team")
    assert "alice" in text
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    assert "\nforged: line" not in text


def test_a_forged_free_counter_does_not_free_a_blocked_task(team) -> None:
    board = team.board
    first = board.create("first")
    second = board.create("second", blocked_by=[first.id])
    team.database.execute("UPDATE board_task SET waiting = 0 WHERE id = %s", (second.id,))
    taken = board.claim_next("alice")
    assert taken.task is not None and taken.task.id == first.id
    again = board.claim_next("bob")  # the only pending task still waits for the first
    assert again.task is None and "alice still holds" not in again.reason
    with pytest.raises(Refused, match="blocked"):
        board.claim(second.id, "bob")
    assert board.get(second.id).status == "pending" and board.get(second.id).owner is None


def test_a_member_recorded_with_our_host_and_pid_but_run_by_no_thread_here_can_go(
        team) -> None:
    """A row naming this host and pid (written by hand, or by another container with the
    same host name and pid 1) is not exempt from liveness: with no teammate thread of that
    name here and no heartbeat, it is gone and its task comes back."""
    import os

    from agent_cli.team.liveness import this_host

    roster, board = team.roster, team.board
    roster.add("mallory", "worker")
    roster.update("mallory", host=this_host(), pid=os.getpid(), status="working")
    board.create("held by a ghost")
    token = board.claim_next("mallory").task.claim_token
    team.database.execute("UPDATE roster_member SET heartbeat_at = clock_timestamp() - "
                          "interval '1 hour' WHERE name = 'mallory'")
    ghost = roster.get("mallory")
    assert not roster.is_alive(ghost)
    assert roster.gone_reason(ghost) == "no heartbeat for 45 s"
    board.create("a change that makes the board look at its leases")
    task = board.get(1)
    assert task.status == "pending" and task.owner is None
    [expired] = [e for e in board.events() if e["action"] == "lease_expired"]
    assert expired["details"]["token"] == token
