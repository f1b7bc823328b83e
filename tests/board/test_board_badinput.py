"""Bad input gets a clear one-line error and changes nothing on disk; corrupt files never
crash a scan, are never deleted, and are reported by name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_cli.board import TaskBoard
from agent_cli.errors import CorruptFile, InvalidName, NotFound, Refused, UserError


def files(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


@pytest.fixture
def board(workdir: Path) -> TaskBoard:
    b = TaskBoard(workdir / ".tasks")
    b.create("A")
    b.create("B", blocked_by=[1])
    b.create("C", blocked_by=[2])
    t = b.claim(1, "alice")
    assert t.claim_token
    return b


def token(board: TaskBoard, task_id: int) -> str:
    return board.get(task_id).claim_token or ""


HOSTILE = ["../x", "/etc", "", "Alice", "a\x00b", "x" * 40, "bob smith", ".hidden", None, 5]


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_owner_names_are_refused_and_change_nothing(board: TaskBoard, name) -> None:
    before = files(board.dir)
    for call in (
        lambda: board.claim_next(name),
        lambda: board.claim(2, name),
        lambda: board.complete(1, name, token(board, 1), "x"),
        lambda: board.release(1, name),
        lambda: board.create("x", actor=name),
    ):
        with pytest.raises(InvalidName, match="invalid (owner|actor)"):
            call()
    assert files(board.dir) == before


@pytest.mark.parametrize(
    ("action", "error", "message"),
    [
        (lambda b: b.update(1, add_blocked_by=[3]), Refused, "task 1 is in_progress"),
        (
            lambda b: b.update(2, add_blocked_by=[3]),
            Refused,
            r"blocking #2 on #3 would make a cycle: #2 -> #3 -> #2",
        ),
        (lambda b: b.update(3, add_blocked_by=[3]), Refused, "task 3 cannot be blocked by itself"),
        (lambda b: b.update(3, add_blocked_by=[99]), NotFound, "no task 99"),
        (lambda b: b.create("D", blocked_by=[1, 42]), NotFound, "no task 42"),
        (lambda b: b.create("   "), UserError, "task subject is empty"),
        (lambda b: b.create("two\nlines"), UserError, "one line"),
        (lambda b: b.create("v", verify={"command": ""}), UserError, "invalid verify"),
        (
            lambda b: b.create("v", verify={"command": "ls", "expected_stdout_file": "../x"}),
            UserError,
            "inside the workdir",
        ),
        (lambda b: b.claim(99, "bob"), NotFound, "no task 99"),
        (lambda b: b.claim(0, "bob"), UserError, "invalid task id 0"),
        (lambda b: b.claim(2, "bob"), Refused, "task 2 is blocked by #1"),
        (lambda b: b.claim(1, "bob"), Refused, "task 1 is owned by alice"),
        (lambda b: b.complete(1, "bob", token(b, 1), "x"), Refused, "task 1 is owned by alice"),
        (lambda b: b.complete(1, "alice", "forged", "x"), Refused, "wrong claim token for task 1"),
        (lambda b: b.complete(1, "alice", None, "x"), Refused, "wrong claim token"),
        (lambda b: b.complete(2, "alice", "t", "x"), Refused, "task 2 is not claimed"),
        (lambda b: b.release(1, "bob"), Refused, "task 1 is owned by alice"),
        (lambda b: b.release(3, "bob"), Refused, "task 3 is not claimed"),
    ],
)
def test_refusals_are_one_line_and_change_nothing(board: TaskBoard, action, error, message):
    before = files(board.dir)
    with pytest.raises(error, match=message) as info:
        action(board)
    assert "\n" not in str(info.value)
    assert files(board.dir) == before


def test_a_longer_cycle_is_refused(workdir: Path) -> None:
    b = TaskBoard(workdir / ".tasks")
    b.create("one")
    b.create("two", blocked_by=[1])
    b.create("three", blocked_by=[2])
    before = files(b.dir)
    with pytest.raises(Refused, match=r"#1 -> #3 -> #2 -> #1"):
        b.update(1, add_blocked_by=[3])
    assert files(b.dir) == before


def test_completed_task_cannot_be_completed_again(board: TaskBoard) -> None:
    tok = token(board, 1)
    board.complete(1, "alice", tok, "done")
    before = files(board.dir)
    with pytest.raises(Refused, match="task 1 is completed"):
        board.complete(1, "alice", tok, "again")
    with pytest.raises(Refused, match="task 1 is completed"):
        board.claim(1, "bob")
    assert files(board.dir) == before


CORRUPT = {
    "not json": b"{bad",
    "not utf-8": b"\xff\xfe{}",
    "an array": b"[1, 2]",
    "missing fields": b'{"id": 4}',
    "unknown status": json.dumps(
        {"id": 4, "subject": "s", "status": "done", "created_at": "t", "updated_at": "t"}
    ).encode(),
    "unknown field": json.dumps(
        {"id": 4, "subject": "s", "ownr": "bob", "created_at": "t", "updated_at": "t"}
    ).encode(),
    "id mismatch": json.dumps(
        {"id": 5, "subject": "s", "created_at": "t", "updated_at": "t"}
    ).encode(),
    "in_progress without token": json.dumps(
        {
            "id": 4,
            "subject": "s",
            "status": "in_progress",
            "owner": "bob",
            "created_at": "t",
            "updated_at": "t",
        }
    ).encode(),
    "hostile owner": json.dumps(
        {
            "id": 4,
            "subject": "s",
            "status": "completed",
            "owner": "../etc",
            "created_at": "t",
            "updated_at": "t",
        }
    ).encode(),
}


@pytest.mark.parametrize("kind", sorted(CORRUPT))
def test_corrupt_file_is_reported_and_kept(board: TaskBoard, kind: str) -> None:
    path = board.dir / "task_4.json"
    path.write_bytes(CORRUPT[kind])
    fresh = TaskBoard(board.dir)
    snap = fresh.snapshot()
    assert [t.id for t in snap.tasks] == [1, 2, 3]
    assert [(p.path, p.task_id) for p in snap.problems] == [(str(path), 4)]
    assert fresh.doctor() == snap.problems
    with pytest.raises(CorruptFile) as info:
        fresh.get(4)
    assert str(path) in str(info.value)
    with pytest.raises(Refused, match="task 4 is corrupt"):
        fresh.claim(4, "bob")
    with pytest.raises(Refused, match="task 4 is corrupt"):
        fresh.create("D", blocked_by=[4])
    # the rest of the board still works, and the corrupt file's id is not reused
    assert fresh.claim_next("bob").task is None  # 2 waits for 1, 3 for 2
    assert fresh.create("E").id == 5
    assert path.read_bytes() == CORRUPT[kind]


def test_a_corrupt_file_written_behind_a_running_board_is_seen_by_doctor(board) -> None:
    board.snapshot()
    (board.dir / "task_2.json").write_bytes(b"garbage")  # no stamp bump: a hand edit
    problems = board.doctor()
    assert [p.task_id for p in problems] == [2, 3]  # 2 is corrupt, 3 waits on it
    assert "corrupt" in problems[1].message
    assert "#3 needs #2" in board.idle_reason("bob")


def test_broken_graph_on_disk_is_reported_not_silently_blocked(workdir: Path) -> None:
    tasks = workdir / ".tasks"
    tasks.mkdir()

    def put(tid: int, deps: list[int]) -> None:
        (tasks / f"task_{tid}.json").write_text(
            json.dumps(
                {
                    "id": tid,
                    "subject": f"t{tid}",
                    "blockedBy": deps,
                    "created_at": "t",
                    "updated_at": "t",
                }
            )
        )

    put(1, [2])
    put(2, [1])
    put(3, [3])
    put(4, [77])
    board = TaskBoard(tasks)
    messages = [(p.task_id, p.message) for p in board.doctor()]
    assert (1, "dependency cycle #1 -> #2 -> #1") in messages
    assert (3, "is blocked by itself") in messages
    assert (4, "is blocked by #77, which does not exist") in messages
    result = board.claim_next("bob")
    assert result.task is None
    assert "#4 needs #77 (missing or corrupt)" in result.reason
    assert "#1 waits for #2" in result.reason


def test_names_that_are_not_task_files_are_reported(workdir: Path) -> None:
    board = TaskBoard(workdir / ".tasks")
    board.create("a")
    (board.dir / "task_abc.json").write_text("{}")
    (board.dir / "notes.txt").write_text("ignored")
    problems = TaskBoard(board.dir).doctor()
    assert len(problems) == 1 and problems[0].path.endswith("task_abc.json")
    assert (board.dir / "task_abc.json").exists()


@pytest.mark.parametrize("field", ["subject", "description"])
def test_undecodable_text_is_one_line_and_nothing_is_written(workdir: Path, field) -> None:
    """Bytes that are not UTF-8 reach Python as lone surrogates (argv, a model's bad JSON):
    refused in words, never a traceback, and the board stays empty."""
    board = TaskBoard(workdir / ".tasks")
    text = "bad \udcff byte"
    args = {"subject": text} if field == "subject" else {"subject": "ok", "description": text}
    with pytest.raises(UserError, match="not valid text: an undecodable character at "
                                        "position 5"):
        board.create(**args)
    assert board.snapshot().tasks == []


def test_undecodable_text_from_the_command_line_is_one_line(workdir: Path) -> None:
    import os
    import subprocess
    import sys

    out = subprocess.run([os.fsencode(sys.executable), b"-m", b"agent_cli", b"-C",
                          os.fsencode(workdir), b"tasks", b"add", b"bad \xff byte"],
                         capture_output=True)
    assert out.returncode == 2
    assert out.stderr.decode().splitlines() == [
        "agent-cli: task subject is not valid text: an undecodable character at position 5 "
        "(use UTF-8)"]
    assert not list((workdir / ".tasks").glob("*.json"))  # (no folder: no file either)
