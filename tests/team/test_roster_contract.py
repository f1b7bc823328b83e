"""The roster on both backends (files, PostgreSQL): members, updates, refusals that change
nothing, concurrent writers from threads and processes, and who runs a member."""

from __future__ import annotations

import threading

import pytest
from support.race import Race
from support.team_backends import OPEN, TeamBackend

from agent_cli.errors import InvalidName, NotFound, Refused, UserError


@pytest.fixture
def roster(team_backend: TeamBackend):
    return team_backend.roster("demo")


def test_add_and_update_are_seen_by_another_reader(team_backend: TeamBackend, roster) -> None:
    roster.add("alice", "tester", model="demo")
    first = roster.get("alice")
    assert first is not None and first.status == "idle" and first.current_task is None
    roster.update("alice", status="working", current_task=3)
    other = team_backend.roster("demo")  # another process's view
    snap = other.snapshot()
    assert snap.team == "demo" and snap.problem is None
    (entry,) = snap.members
    assert (entry.name, entry.role, entry.model) == ("alice", "tester", "demo")
    assert (entry.status, entry.current_task) == ("working", 3)
    assert entry.updated_at >= first.updated_at
    assert other.get("alice").current_task == 3 and other.get("bob") is None


def test_re_adding_a_member_resets_it_to_idle_and_keeps_its_place(roster) -> None:
    roster.add("alice", "tester")
    roster.add("bob", "reviewer")
    roster.update("alice", status="shutdown", current_task=4, idle_reason="bye", tokens=120)
    again = roster.add("alice", "senior tester")
    assert (again.status, again.current_task, again.idle_reason) == ("idle", None, "")
    assert again.role == "senior tester" and again.tokens == 120
    assert [m.name for m in roster.members()] == ["alice", "bob"]


@pytest.mark.parametrize(
    "fields",
    [{"status": "sleeping"}, {"current_task": "three"}, {"colour": "red"}, {"name": "bob"}],
)
def test_bad_updates_are_refused_and_change_nothing(roster, fields) -> None:
    roster.add("alice", "tester")
    before = roster.members()
    with pytest.raises(UserError):
        roster.update("alice", **fields)
    assert roster.members() == before


def test_unknown_member_and_hostile_names(roster) -> None:
    roster.add("alice", "tester")
    before = roster.members()
    with pytest.raises(NotFound, match="no teammate 'bob'"):
        roster.update("bob", status="idle")
    for name in ("../x", "/etc", "", "Alice", "a\x00", "x" * 40):
        with pytest.raises(InvalidName):
            roster.add(name, "tester")
        with pytest.raises(InvalidName):
            roster.get(name)
    with pytest.raises(UserError, match="role"):
        roster.add("carol", "   ")
    assert roster.members() == before


def test_a_member_added_but_not_running_is_not_alive(roster) -> None:
    member = roster.add("alice", "tester")
    assert not roster.is_alive(member) and not roster.is_alive(roster.get("alice"))


def test_running_here_without_a_thread_is_not_alive_and_ours_to_restart(roster) -> None:
    import os

    mine = roster.add_running("alice", "coder")
    assert mine.pid == os.getpid() and mine.host is not None
    assert not roster.is_alive(roster.get("alice"))  # no teammate thread of ours runs it
    assert roster.add_running("alice", "coder").pid == os.getpid()


RUNNER = OPEN + """
import sys
roster = stores(sys.argv[1])[1]
roster.add_running("alice", "coder")
print("ready", flush=True)
sys.stdin.readline()
"""


def test_a_member_another_live_process_runs_is_alive_and_cannot_be_started_here(
    team_backend: TeamBackend, roster
) -> None:
    race = Race()
    child = race.process("runner", RUNNER, team_backend.spec)
    try:
        member = roster.get("alice")
        assert member.pid == child.pid and roster.is_alive(member)
        with pytest.raises(Refused, match=f"already running in process {child.pid}"):
            roster.add_running("alice", "coder")
        assert roster.get("alice").pid == child.pid  # the refusal changed nothing
    finally:
        race.go()
        race.finish()


WRITER = OPEN + """
import sys
roster = stores(sys.argv[1])[1]
name = sys.argv[2]
print("ready", flush=True)
sys.stdin.readline()
roster.add(name, "worker")
for i in range(20):
    roster.update(name, current_task=i, status="working")
"""


def test_concurrent_threads_and_processes_lose_no_update(team_backend: TeamBackend) -> None:
    roster = team_backend.roster("demo")
    race = Race()
    for i in range(2):
        race.process(f"proc{i}", WRITER, team_backend.spec, f"proc{i}")

    def worker(name: str) -> None:
        roster.add(name, "worker")
        for i in range(20):
            roster.update(name, current_task=i, status="working")

    for i in range(6):
        race.thread(worker, f"thread{i}")
    race.go()
    race.finish()
    members = {m.name: m for m in team_backend.roster("demo").members()}
    assert set(members) == {f"thread{i}" for i in range(6)} | {"proc0", "proc1"}
    assert all(m.current_task == 19 for m in members.values())


def test_updates_racing_on_one_member_keep_every_field(roster) -> None:
    roster.add("alice", "worker")
    fields = [{"tokens": 7}, {"idle_reason": "waiting"}, {"current_task": 5},
              {"model": "m2"}]
    threads = [threading.Thread(target=roster.update, args=("alice",), kwargs=f)
               for f in fields]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    got = roster.get("alice")
    assert (got.tokens, got.idle_reason, got.current_task, got.model) == (
        7, "waiting", 5, "m2")
