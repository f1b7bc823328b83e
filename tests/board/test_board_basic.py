"""Task board behaviour a user relies on: claiming, completing, releasing, ids, events, stamps.
The semantic tests run on both backends (`board`); the ones about files on the file board."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from support.board_backends import Backend

from agent_cli.board import TaskBoard
from agent_cli.board import section as store_mod
from agent_cli.errors import NotFound, Refused, StorageError


@pytest.fixture
def board(board_backend: Backend) -> TaskBoard:
    return board_backend.board()


@pytest.fixture
def file_board(workdir: Path) -> TaskBoard:
    return TaskBoard(workdir / ".tasks")


def test_task_file_uses_the_on_disk_contract(file_board: TaskBoard) -> None:
    board = file_board
    task = board.create(
        "Write the parser",
        "lexer and parser",
        verify={"command": "echo 42", "expected_stdout": "42"},
    )
    data = json.loads((board.dir / f"task_{task.id}.json").read_text())
    assert data["id"] == 1 and data["status"] == "pending" and data["owner"] is None
    assert data["blockedBy"] == [] and data["claim_token"] is None and data["result"] is None
    assert data["verify"]["command"] == "echo 42"
    assert data["created_at"].endswith("Z")


def test_claim_next_takes_the_lowest_claimable_id(board: TaskBoard) -> None:
    for name in ("one", "two", "three"):
        board.create(name)
    board.claim(2, "bob")
    got = board.claim_next("alice")
    assert got.task is not None and got.task.id == 1
    assert board.claim_next("carol").task.id == 3
    assert board.claim_next("dave").task is None


def test_owner_holds_at_most_one_task(board: TaskBoard) -> None:
    board.create("a")
    board.create("b")
    first = board.claim_next("alice").task
    again = board.claim_next("alice")
    assert again.task is None and again.reason == f"alice still holds #{first.id}"
    with pytest.raises(Refused, match="alice already holds #1"):
        board.claim(2, "alice")
    assert board.held_by("alice").id == 1
    assert board.idle_reason("alice") == "alice holds #1"


def test_abc_dependencies_unblock_in_order(board: TaskBoard) -> None:
    a, b = board.create("A"), board.create("B")
    c = board.create("C", blocked_by=[a.id, b.id])
    ta = board.claim_next("alice").task
    tb = board.claim_next("bob").task
    assert {ta.id, tb.id} == {a.id, b.id}
    assert board.claim_next("carol").task is None
    assert board.idle_reason("carol") == "no claimable task: #3 waits for #1, #2"
    done = board.complete(ta.id, "alice", ta.claim_token, "A done")
    assert done.unblocked == []
    with pytest.raises(Refused, match="task 3 is blocked by #2"):
        board.claim(c.id, "carol")
    done = board.complete(tb.id, "bob", tb.claim_token, "B done")
    assert done.unblocked == [c.id]
    assert board.claim_next("carol").task.id == c.id


def test_complete_records_result_and_frees_the_owner(board: TaskBoard) -> None:
    board.create("a")
    board.create("b")
    task = board.claim_next("alice").task
    result = board.complete(task.id, "alice", task.claim_token, "all green")
    assert result.task.status == "completed" and result.task.result == "all green"
    assert result.task.claim_token is None and result.task.owner == "alice"
    assert board.get(task.id).status == "completed"
    assert board.claim_next("alice").task.id == 2


def test_release_puts_the_task_back(board: TaskBoard) -> None:
    board.create("a")
    task = board.claim_next("alice").task
    back = board.release(task.id, "alice", reason="shutting down")
    assert back.status == "pending" and back.owner is None and back.claim_token is None
    again = board.claim_next("bob").task
    assert again.id == task.id and again.claim_token != task.claim_token
    with pytest.raises(Refused, match="wrong claim token"):
        board.complete(task.id, "bob", task.claim_token, "stale token")


def test_ids_are_never_reused_even_after_a_file_is_deleted(file_board: TaskBoard) -> None:
    board = file_board
    board.create("a")
    two = board.create("b")
    (board.dir / f"task_{two.id}.json").unlink()
    fresh = TaskBoard(board.dir)
    assert fresh.create("c").id == 3
    (board.dir / ".next_id").unlink()
    assert fresh.create("d").id == 4  # the highest file on disk still counts


def test_every_change_is_in_the_event_log(board: TaskBoard) -> None:
    board.create("a")
    task = board.claim_next("alice").task
    board.complete(task.id, "alice", task.claim_token, "ok")
    board.create("b")
    board.claim(2, "bob")
    board.release(2, "bob", "stopped")
    actions = [(e["action"], e["task_id"], e["actor"]) for e in board.events()]
    assert actions == [
        ("created", 1, "lead"),
        ("claimed", 1, "alice"),
        ("completed", 1, "alice"),
        ("created", 2, "lead"),
        ("claimed", 2, "bob"),
        ("released", 2, "bob"),
    ]
    assert all("time" in e and "details" in e for e in board.events())


def test_events_skip_a_torn_last_line(file_board: TaskBoard) -> None:
    board = file_board
    board.create("a")
    with open(board.dir / "events.jsonl", "ab") as fh:
        fh.write(b'{"time": "2025-01-01T00:00:00Z", "act')
    assert [e["action"] for e in board.events()] == ["created"]
    board.create("b")  # the next append starts on a fresh line
    assert [e["action"] for e in board.events()] == ["created", "created"]
    assert board.doctor() == []


def test_stamp_changes_on_every_write_and_only_then(board: TaskBoard) -> None:
    assert board.stamp() == ""
    board.create("a")
    s1 = board.stamp()
    board.snapshot()
    board.idle_reason("bob")
    assert board.stamp() == s1
    task = board.claim_next("bob").task
    s2 = board.stamp()
    assert s2 != s1
    with pytest.raises(Refused):
        board.complete(task.id, "bob", "nope", "x")
    assert board.stamp() == s2


def test_on_change_called_after_each_write(board_backend: Backend) -> None:
    calls: list[str] = []
    board = board_backend.board(on_change=lambda: calls.append(board.stamp()))
    board.create("a")
    board.claim_next("alice")
    board.claim_next("bob")  # nothing claimed: no change
    assert len(calls) == 2 and calls[0] != calls[1]


def test_second_instance_sees_every_change(board_backend: Backend) -> None:
    """Another board on the same directory (schema) stands in for another process."""
    mine, other = board_backend.board(), board_backend.board()
    mine.create("a")
    assert [t.subject for t in other.snapshot().tasks] == ["a"]
    for i in range(40):  # same-size rewrites of one file: inode numbers and mtimes repeat
        t = other.claim(1, "bob")
        assert mine.get(1).claim_token == t.claim_token, f"stale cache after {i} rounds"
        other.release(1, "bob")
        assert mine.get(1).owner is None, f"stale cache after {i} rounds"
    for _ in range(300):  # more writes than the stamp's journal remembers
        other.create("x")
    snap = mine.snapshot()
    assert len(snap.tasks) == 301 and snap.problems == []
    assert mine.claim_next("carol").task.id == 1


def test_unknown_ids_are_not_found(board: TaskBoard) -> None:
    assert board.snapshot().tasks == []
    assert board.claim_next("alice").reason == "no tasks on the board"
    with pytest.raises(NotFound, match="no task 9"):
        board.get(9)
    board.create("a")
    with pytest.raises(NotFound, match="no task 9"):
        board.claim(9, "alice")
    with pytest.raises(NotFound, match="no task 9"):
        board.complete(9, "alice", "t", "")


def test_idle_reasons(board: TaskBoard) -> None:
    board.create("a")
    board.create("b")
    for owner in ("alice", "bob"):
        t = board.claim_next(owner).task
        board.complete(t.id, owner, t.claim_token, "ok")
    assert board.idle_reason("carol") == "all 2 tasks completed"


def test_full_rescan_rereads_a_rewrite_that_looks_unchanged(workdir: Path) -> None:
    """Same inode, same size, same mtime (a hand edit within one clock tick): still re-read."""
    board = TaskBoard(workdir / ".tasks")
    board.create("a")
    path = board.dir / "task_1.json"
    board.claim(1, "bob")
    assert board.doctor() == []  # full rescan: the cache now holds bob
    st = os.stat(path)
    path.write_text(path.read_text().replace('"bob"', '"ann"'))  # in place, same size
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(path).st_size == st.st_size and os.stat(path).st_ino == st.st_ino
    board.doctor()
    assert board.get(1).owner == "ann"


def test_a_damaged_or_deleted_stamp_only_costs_a_rescan(workdir: Path) -> None:
    mine, other = TaskBoard(workdir / ".tasks"), TaskBoard(workdir / ".tasks")
    mine.create("a")
    assert other.get(1).owner is None
    stamp = mine.dir / ".stamp"
    stamp.write_bytes(b"\x00garbage")
    other.claim(1, "bob")
    assert mine.get(1).owner == "bob"
    stamp.unlink()
    other.release(1, "bob")
    assert mine.get(1).owner is None
    assert mine.doctor() == []


KILL_AFTER_APPEND = """
import os, signal, sys
from pathlib import Path
from agent_cli.board import section as store
from agent_cli.board.store import TaskBoard

board = TaskBoard(Path(sys.argv[1]) / ".tasks")
real = store.write_journal

def write_journal(path, journal):
    if not journal.pending:  # the writer is done and drops its pending events: die first
        os.kill(os.getpid(), signal.SIGKILL)
    real(path, journal)

store.write_journal = write_journal
board.claim_next("dead")
"""


def _stamp_lines(workdir) -> list[str]:
    return (workdir / ".tasks" / ".stamp").read_text().splitlines()


def test_an_event_already_appended_by_a_killed_writer_is_not_appended_again(workdir):
    TaskBoard(workdir / ".tasks").create("one")
    done = subprocess.run([sys.executable, "-c", KILL_AFTER_APPEND, str(workdir)], timeout=30)
    assert done.returncode == -signal.SIGKILL
    assert len(_stamp_lines(workdir)) == 3  # the pending events are still in the stamp

    board = TaskBoard(workdir / ".tasks")
    claims = [e for e in board.events() if e["action"] == "claimed"]
    assert [(e["task_id"], e["actor"]) for e in claims] == [(1, "dead")]
    assert len(_stamp_lines(workdir)) == 2  # settled
    board.create("two")  # the next write goes on normally
    assert Counter(e["action"] for e in board.events()) == {"created": 2, "claimed": 1}


def test_the_event_of_a_write_that_did_not_land_is_never_appended(workdir, monkeypatch):
    board = TaskBoard(workdir / ".tasks")
    board.create("one")

    def full_disk(path, data):
        raise StorageError(f"cannot write {path}: No space left on device")

    with monkeypatch.context() as m:
        m.setattr(store_mod, "atomic_write_json", full_disk)
        with pytest.raises(StorageError):
            board.claim_next("alice")
    assert board.get(1).status == "pending"
    assert [e["action"] for e in board.events()] == ["created"]
    assert len(_stamp_lines(workdir)) == 2  # the dead write's events were dropped
    board.claim_next("alice")
    assert [e["action"] for e in board.events()] == ["created", "claimed"]


def test_every_event_carries_a_unique_id(board_backend: Backend) -> None:
    board = board_backend.board()
    board.create("one")
    board.create("two", blocked_by=[1])
    token = board.claim(1, "alice").claim_token
    board.complete(1, "alice", token, "ok")
    ids = [e["id"] for e in board.events()]
    assert len(ids) == 4 and len(set(ids)) == 4
    assert all(i.split("/")[0].split(":")[1].isdigit() for i in ids)
