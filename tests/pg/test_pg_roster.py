"""Liveness across hosts on PostgreSQL: heartbeats on the database clock, never pids. A
member whose heartbeat is older than the limit is gone (`no heartbeat for 45 s`), loses the
right to its name, and the board's owner check says so; a member another host runs is alive
while its heartbeat is young whatever its pid means here."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from support.race import Race
from support.team_backends import OPEN

from agent_cli.errors import Refused
from agent_cli.pg.db import Database
from agent_cli.pg.roster import PgOwnerLiveness, PgRoster
from agent_cli.pg.schema import ensure_schema
from agent_cli.pg.team_schema import TEAM


@pytest.fixture
def roster(pg_db: Database) -> PgRoster:
    ensure_schema(pg_db, [TEAM])
    return PgRoster(pg_db, "demo")


def age_heartbeat(roster: PgRoster, name: str, seconds: float) -> None:
    """The member's last heartbeat `seconds` ago (its host went away that long ago)."""
    roster.db.execute("UPDATE roster_member SET heartbeat_at = clock_timestamp() - "
                      "make_interval(secs => %s) WHERE name = %s", (seconds, name))


def elsewhere(roster: PgRoster, name: str, pid: int = 4242) -> None:
    """`name` recorded as run by process `pid` on another host, heartbeat now."""
    roster.add(name, "worker")
    roster.update(name, host="other-host", pid=pid, status="working", current_task=1)


def test_a_member_on_another_host_is_alive_while_its_heartbeat_is_young(roster) -> None:
    elsewhere(roster, "alice")
    member = roster.get("alice")
    assert member.host == "other-host" and roster.is_alive(member)
    assert PgOwnerLiveness(roster)(["alice"]) == {}
    with pytest.raises(Refused, match="already running in process 4242 on other-host"):
        roster.add_running("alice", "worker")


def test_a_stale_heartbeat_is_gone_with_the_reason_and_frees_the_name(roster) -> None:
    elsewhere(roster, "alice")
    elsewhere(roster, "bob")
    age_heartbeat(roster, "alice", 46)
    age_heartbeat(roster, "bob", 44)
    alice = roster.get("alice")
    assert not roster.is_alive(alice)
    assert roster.gone_reason(alice) == "no heartbeat for 45 s"
    liveness = PgOwnerLiveness(roster)
    assert liveness(["alice", "bob", "carol"]) == {"alice": "no heartbeat for 45 s"}
    assert liveness.gone("alice") == "no heartbeat for 45 s" and liveness.gone("bob") is None
    mine = roster.add_running("alice", "worker")  # this host takes the name over
    assert (mine.host, mine.pid) != ("other-host", 4242) and mine.pid == os.getpid()
    assert liveness.gone("alice") is None


def test_a_pid_proves_nothing_either_way(roster) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    roster.add_running("alice", "worker")
    roster.update("alice", pid=int(dead))  # a pid that has ended, on this very host
    assert PgOwnerLiveness(roster)(["alice"]) == {}  # its heartbeat is young: alive
    roster.update("alice", pid=1)  # a pid that surely runs
    age_heartbeat(roster, "alice", 100)
    assert PgOwnerLiveness(roster)(["alice"]) == {"alice": "no heartbeat for 45 s"}


def test_shut_down_or_never_started_members_are_not_gone(roster) -> None:
    elsewhere(roster, "alice")
    age_heartbeat(roster, "alice", 1000)
    roster.update("alice", status="shutdown", pid=None, host=None)
    roster.add("bob", "worker")  # registered, never run
    assert PgOwnerLiveness(roster)(["alice", "bob"]) == {}
    assert not roster.is_alive(roster.get("alice")) and not roster.is_alive(roster.get("bob"))


def test_the_limit_is_the_rosters(pg_db: Database) -> None:
    ensure_schema(pg_db, [TEAM])
    roster = PgRoster(pg_db, "demo", stale_s=5)
    elsewhere(roster, "alice")
    age_heartbeat(roster, "alice", 6)
    assert roster.gone_reason(roster.get("alice")) == "no heartbeat for 5 s"


RUNNER = OPEN + """
import sys
roster = stores(sys.argv[1])[1]
roster.add_running("alice", "coder")
roster.add_running("bob", "coder")
print("ready", flush=True)
sys.stdin.readline()
print(roster.heartbeat(["alice", "bob", "carol"]), flush=True)
"""


def test_a_process_renews_only_the_members_it_runs(roster) -> None:
    spec = f"postgresql:{roster.db.url}#{roster.db.schema}"
    race = Race()
    race.process("runner", RUNNER, spec)
    age_heartbeat(roster, "alice", 40)
    age_heartbeat(roster, "bob", 50)
    assert roster.add_running("bob", "coder").pid == os.getpid()  # bob was gone: ours now
    assert roster.heartbeat(["alice", "bob"]) == ["bob"]  # alice is the runner's
    race.go()
    (out,) = race.finish().values()
    assert out.strip() == "['alice']"  # it no longer runs bob: left alone
    alice = roster.get("alice")
    assert alice.heartbeat_age_s < 40 and roster.is_alive(alice)


def test_hosts_and_heartbeats_are_columns_a_team_view_can_read(roster) -> None:
    elsewhere(roster, "alice")
    roster.add_running("bob", "coder")
    rows = dict(roster.db.execute("SELECT name, host FROM roster_member"))
    assert rows["alice"] == "other-host" and rows["bob"] == roster.get("bob").host
    by_name = {m.name: m for m in roster.members()}
    assert all(m.heartbeat_age_s is not None for m in by_name.values())


def test_the_lease_renewer_renews_the_heartbeats_of_the_live_teammates(roster, workdir) -> None:
    from agent_cli.board.store import TaskBoard
    from agent_cli.team.renewer import LeaseRenewer

    board = TaskBoard(workdir / ".tasks", lease_s=600)
    warnings: list[str] = []
    running = ["alice"]
    renewer = LeaseRenewer(board, lambda: list(running), warnings.append,
                           heartbeat=roster.heartbeat)
    assert renewer.interval_s == 15.0  # not the lease's 200 s: a silent member is gone at 45
    assert LeaseRenewer(board, lambda: [], warnings.append).interval_s == 200.0
    roster.add_running("alice", "coder")
    roster.add_running("bob", "coder")
    age_heartbeat(roster, "alice", 40)
    age_heartbeat(roster, "bob", 40)
    renewer.renew_once()
    assert roster.get("alice").heartbeat_age_s < 40  # its thread runs: renewed
    assert roster.get("bob").heartbeat_age_s >= 40  # its thread ended: left to go stale
    assert warnings == []


def test_the_board_takes_back_the_task_of_an_owner_whose_heartbeat_stopped(
    roster, workdir
) -> None:
    from agent_cli.board.store import TaskBoard

    board = TaskBoard(workdir / ".tasks", lease_s=600, owner_gone=PgOwnerLiveness(roster))
    board.create("held on a host that went away")
    elsewhere(roster, "alice")
    token = board.claim_next("alice").task.claim_token
    assert board.get(1).owner == "alice"  # its heartbeat is young: it keeps the task
    age_heartbeat(roster, "alice", 60)
    board.create("a change that makes the board look at its leases")
    task = board.get(1)
    assert task.status == "pending" and task.owner is None
    [expired] = [e for e in board.events() if e["action"] == "lease_expired"]
    assert expired["details"] == {**expired["details"], "token": token,
                                  "reason": "no heartbeat for 45 s"}
