"""The first prompt's look at .tasks/ and .team/ without their stores (team/state_probe.py,
board/presence.py): "empty" only when the real stores would read nothing, never when
something odd is on the way."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_cli.board.presence import may_hold_tasks
from agent_cli.board.store import TaskBoard
from agent_cli.team.mailbox import Mailbox
from agent_cli.team.roster import Roster
from agent_cli.team.state_probe import provably_empty


def empty(workdir: Path) -> bool:
    return provably_empty(workdir / ".tasks", workdir / ".team")


def test_a_fresh_workdir_and_state_folders_without_records_are_empty(workdir: Path) -> None:
    assert empty(workdir)
    (workdir / ".tasks").mkdir()
    (workdir / ".tasks" / ".lock").write_text("")  # what a board leaves when it never had a task
    (workdir / ".team" / "inbox").mkdir(parents=True)
    (workdir / ".team" / "inbox" / "alice.jsonl").write_text("")  # not the lead's mail
    assert empty(workdir)


@pytest.mark.parametrize("write", [
    lambda d: TaskBoard(d / ".tasks").create("a task"),
    lambda d: Roster(d / ".team").add("alice", "tester"),
    lambda d: Mailbox(d / ".team").send("alice", "lead", "hello"),
], ids=["a task", "a member", "mail for the lead"])
def test_what_each_store_writes_makes_the_state_not_empty(workdir: Path, write) -> None:
    write(workdir)  # the real store: the probe's file names must follow the stores'
    assert not empty(workdir)


def test_a_corrupt_task_file_is_not_proof_of_an_empty_board(workdir: Path) -> None:
    (workdir / ".tasks").mkdir()
    (workdir / ".tasks" / "task_7.json").write_text("{not json")
    assert may_hold_tasks(workdir / ".tasks")
    assert TaskBoard(workdir / ".tasks").snapshot().problems  # the board reports it


@pytest.mark.parametrize("planted", [".tasks", ".team"])
def test_a_symlinked_state_folder_is_never_proof(workdir: Path, tmp_path: Path,
                                                 planted: str) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, workdir / planted)
    assert not empty(workdir)  # the stores read it, and say what they found


def test_a_file_where_the_tasks_folder_should_be_is_not_proof(workdir: Path) -> None:
    (workdir / ".tasks").write_text("planted")
    assert may_hold_tasks(workdir / ".tasks")
