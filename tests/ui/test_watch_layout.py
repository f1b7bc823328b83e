"""`agent-cli watch` frames that must use what they know: the worktree a task works in, the
rows the board leaves empty, and the order the board committed its writes in."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.worktree import git_repo

from agent_cli.board import TaskBoard
from agent_cli.cli import main
from agent_cli.team.roster import Roster
from agent_cli.team.worktrees import Worktrees


def frame(workdir: Path, capsys, *extra: str) -> str:
    assert main(["-C", str(workdir), "watch", "--once", *extra]) == 0
    return capsys.readouterr().out


def progress_detail(text: str, task_id: int) -> str:
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if f"#{task_id} " in line)
    return lines[at + 1]


def test_the_in_progress_column_shows_the_tasks_worktree(workdir: Path, capsys) -> None:
    git_repo(workdir, {"a.txt": "a\n"})
    board = TaskBoard(workdir / ".tasks")
    board.create("first")
    board.create("second")
    trees = Worktrees(workdir, board)
    for task_id, owner in ((1, "alice"), (2, "bob")):
        trees.prepare(board.claim(task_id, owner), owner)
    text = frame(workdir, capsys, "--width", "120")
    assert "wt task-1" in progress_detail(text, 1) and "wt task-2" in progress_detail(text, 2)
    trees.state.update(2, status="refused", detail="conflict in a.txt")
    text = frame(workdir, capsys, "--width", "200")
    assert "wt task-2 landing refused" in progress_detail(text, 2)
    assert "refused" not in progress_detail(text, 1)


def test_planted_worktree_records_show_nothing_but_the_known_states(workdir: Path,
                                                                     capsys) -> None:
    board = TaskBoard(workdir / ".tasks")
    board.create("one")
    board.claim(1, "bob")
    records = workdir / ".agent-cli" / "worktrees" / "state.json"
    records.parent.mkdir(parents=True)
    records.write_text(json.dumps({"tasks": {"1": {"status": "\x1b[2Jactive",
                                                   "branch": "\x1b]0;pwned\x07"},
                                             "²": {"status": "active"}}}))
    text = frame(workdir, capsys, "--width", "120")
    assert "\x1b" not in text and " wt " not in text and "@bob" in text
    records.write_text("{not json")
    assert "@bob" in frame(workdir, capsys, "--width", "120")
    elsewhere = workdir.parent / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "state.json").write_text(json.dumps({"tasks": {"1": {"status": "active"}}}))
    records.unlink()
    records.parent.rmdir()
    records.parent.symlink_to(elsewhere)  # a planted link: never followed
    assert " wt " not in frame(workdir, capsys, "--width", "120")


@pytest.mark.parametrize("mates", [6, 9])
def test_teammates_take_the_rows_a_short_board_leaves_empty(workdir: Path, capsys,
                                                           mates: int) -> None:
    board = TaskBoard(workdir / ".tasks")
    for i in range(1, 4):
        board.create(f"job {i}")
    roster = Roster(workdir / ".team")
    for i in range(mates):
        roster.add(f"mate{i}", "worker")
    text = frame(workdir, capsys, "--width", "80", "--height", "24")
    lines = text.splitlines()
    assert len(lines) < 24 and all(len(line) <= 80 for line in lines)
    shown = [n for n in range(mates) if any(line.startswith(f"mate{n} ") for line in lines)]
    assert "#1 job 1" in text and "#3 job 3" in text  # the board still shows every task
    if mates == 6:
        assert shown == list(range(6)) and "more" not in text
    else:  # more than fit: as many as the frame holds (no empty row), a count of the others
        assert f"+{mates - len(shown)} more" in text and len(lines) == 23


def test_an_overflowing_board_lends_the_rows_it_cannot_use(workdir: Path, capsys) -> None:
    board = TaskBoard(workdir / ".tasks")
    for i in range(1, 10):
        board.complete(board.create(f"job {i}").id, "alice",
                       board.claim(i, "alice").claim_token, "done")
    roster = Roster(workdir / ".team")
    for i in range(6):
        roster.add(f"mate{i}", "worker")
    text = frame(workdir, capsys, "--width", "80", "--height", "25")
    lines = text.splitlines()
    assert len(lines) < 25
    assert all(any(line.startswith(f"mate{i} ") for line in lines) for i in range(6))
    assert "more" not in text and "+6 older" in text  # three tasks shown, as before


def test_writes_in_the_same_millisecond_are_shown_in_the_boards_order(
        workdir: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    import agent_cli.board.store as store

    monkeypatch.setattr(store, "utc_now", lambda: "2026-03-01T12:00:00.000Z")
    board = TaskBoard(workdir / ".tasks")
    for i in range(1, 21):
        board.create(f"job {i}")
    board.update(3, add_blocked_by=[20])  # the last write, at the same time as all others
    text = frame(workdir, capsys, "--width", "80", "--height", "24")
    shown = [line.split()[0] for line in text.splitlines() if line.startswith("#")]
    assert shown[:3] == ["#3", "#20", "#19"]
