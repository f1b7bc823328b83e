"""`agent-cli watch` reads the team through its stores only (what a database backend
implements): given stores that keep nothing on disk, it shows their board, team, events and
the lead's unread count, re-reads each only when its stamp moves, and touches no file of
`.tasks/` or `.team/` in the workdir."""

from __future__ import annotations

from pathlib import Path

from agent_cli.board.models import BoardSnapshot, Task
from agent_cli.storeset import BoardLocation, StoreSet
from agent_cli.team.roster import Member, RosterSnapshot
from agent_cli.ui.watch_data import WatchSource

NOW = "2026-01-01T00:00:00.000Z"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Board:
    """In memory: the calls a watcher may make, counted."""

    def __init__(self) -> None:
        self.tasks = [Task(id=1, subject="from the database", created_at=NOW, updated_at=NOW)]
        self.version = 1
        self.snapshots = 0

    def stamp(self) -> str:
        return f"v{self.version}"

    def snapshot(self) -> BoardSnapshot:
        self.snapshots += 1
        return BoardSnapshot(tasks=list(self.tasks), stamp=self.stamp())

    def recent_events(self, count: int) -> list[dict]:
        return [{"ts": NOW, "actor": "lead", "action": "created", "task_id": t.id}
                for t in self.tasks][-count:]

    def write_order(self) -> dict[int, int]:
        return {t.id: t.id for t in self.tasks}


class Roster:
    def __init__(self) -> None:
        self.members = [Member(name="alice", role="tester", updated_at=NOW, host="far-away")]
        self.version = 1

    def stamp(self) -> int:
        return self.version

    def snapshot(self) -> RosterSnapshot:
        return RosterSnapshot("red", list(self.members))

    def is_alive(self, member: Member) -> bool:
        return True  # a heartbeat says so: no pid on this host to look at


class Mail:
    def __init__(self) -> None:
        self.unread = 2

    def unread_stamp(self, name: str) -> tuple[int, ...]:
        return (self.unread,)

    def unread_count(self, name: str) -> int:
        assert name == "lead"
        return self.unread


def in_memory() -> StoreSet:
    return StoreSet(board=Board(), mail=Mail(), roster=Roster(), protocols=None,
                    location=BoardLocation("postgresql", "postgresql://h/db", "red"),
                    make_wakeups=lambda notify: None)


def test_watch_shows_what_the_stores_hold_and_no_file_is_touched(workdir: Path) -> None:
    team = in_memory()
    source = WatchSource(workdir, Clock(), stores=team)
    assert source.poll()
    state = source.state
    assert [t.subject for t in state.board.tasks] == ["from the database"]
    assert state.team == "red" and [m.name for m in state.members] == ["alice"]
    assert state.alive == {"alice": True} and state.lead_unread == 2
    assert [e["action"] for e in state.events] == ["created"] and state.written == {1: 1}
    assert list(workdir.iterdir()) == []  # no .tasks/, no .team/: nothing stat-ed into being


def test_each_part_is_re_read_only_when_its_stamp_moves(workdir: Path) -> None:
    team = in_memory()
    clock = Clock()
    source = WatchSource(workdir, clock, stores=team)
    source.poll()
    for _ in range(10):
        clock.now += 0.1
        assert not source.poll()
    assert team.board.snapshots == 1
    team.board.tasks.append(Task(id=2, subject="second", created_at=NOW, updated_at=NOW))
    team.board.version += 1
    assert source.poll() and [t.id for t in source.state.board.tasks] == [1, 2]
    assert source.state.events[-1]["task_id"] == 2 and team.board.snapshots == 2
    team.roster.members.append(Member(name="bob", role="dev", updated_at=NOW))
    team.roster.version += 1
    assert source.poll() and [m.name for m in source.state.members] == ["alice", "bob"]
    team.mail.unread = 0
    assert source.poll() and source.state.lead_unread == 0
