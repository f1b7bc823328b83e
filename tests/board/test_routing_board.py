"""Who may take a task, on the board alone: assignee and role rules inside claim/claim_next,
the refusal and idle texts, re-routing while pending, and the on-disk shape of the fields.
On both backends but for the on-disk shape and hand edits (files only)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.board_backends import Backend

from agent_cli.board import TaskBoard
from agent_cli.errors import Refused, UserError


@pytest.fixture
def board(board_backend: Backend) -> TaskBoard:
    return board_backend.board()


@pytest.fixture
def file_board(workdir: Path) -> TaskBoard:
    return TaskBoard(workdir / ".tasks")


def test_an_assigned_task_is_skipped_by_others_and_taken_by_its_assignee(board):
    board.create("for writer", assignee="writer")
    board.create("anyone")
    got = board.claim_next("reviewer", role="reviewer")
    assert got.task is not None and got.task.id == 2  # lowest id *it may take*
    assert board.claim_next("reader", role="reader").task is None
    mine = board.claim_next("writer", role="writer").task
    assert (mine.id, mine.owner) == (1, "writer")


def test_explicit_claim_by_someone_else_is_refused_with_the_reason_and_changes_nothing(board):
    board.create("for writer", assignee="writer")
    before = board.get(1)
    with pytest.raises(Refused, match=r"^task 1 is assigned to writer$"):
        board.claim(1, "reviewer", role="writer")  # the right role is not the right person
    assert board.get(1) == before
    assert [e["action"] for e in board.events()] == ["created"]


def test_a_role_task_goes_only_to_members_of_that_role(board):
    board.create("run the tests", role="tester")
    with pytest.raises(Refused, match=r"task 1 is for role 'tester' \(bob is 'coder'\)"):
        board.claim(1, "bob", role="coder")
    with pytest.raises(Refused, match=r"bob has no role"):
        board.claim(1, "bob")
    assert board.claim_next("bob", role="coder").task is None
    # roles compare as the roster stores them: spaces collapsed, case ignored
    task = board.claim_next("tess", role="  Tester ").task
    assert task is not None and task.owner == "tess"


def test_assignee_and_role_together_both_hold(board):
    board.create("x", assignee="writer", role="docs")
    with pytest.raises(Refused, match="for role 'docs'"):
        board.claim(1, "writer", role="coder")
    assert board.claim(1, "writer", role="docs").owner == "writer"


def test_idle_reason_names_the_tasks_it_may_not_take(board):
    board.create("for writer", assignee="writer")
    board.create("for testers", role="tester")
    reason = board.claim_next("reviewer", role="reviewer").reason
    assert reason == (
        "no claimable task: #1 is assigned to writer; #2 is for role 'tester'"
    )
    assert board.idle_reason("reviewer", role="reviewer") == reason
    assert board.idle_reason("writer", role="writer") == "#1 is claimable"


def test_reserved_tasks_do_not_hide_blocked_ones_from_the_idle_reason(board):
    board.create("first")
    board.create("after first", blocked_by=[1])
    board.create("writer's", assignee="writer", blocked_by=[1])
    board.claim(1, "alice")
    reason = board.idle_reason("bob")
    assert "#2 waits for #1" in reason and "#3 is assigned to writer" in reason


def test_reassigning_while_pending_is_allowed_never_in_progress(board):
    board.create("x", assignee="writer")
    task = board.update(1, assignee="alice", actor="lead")
    assert task.assignee == "alice"
    assert board.update(1, assignee="").assignee is None  # "" clears
    assert board.update(1, role="tester", require_plan=True).role == "tester"
    board.claim(1, "tess", role="tester")
    before = board.get(1)
    with pytest.raises(Refused, match=r"in_progress \(owned by tess\): only a pending task can "
                                      r"be reassigned"):
        board.update(1, assignee="bob")
    with pytest.raises(Refused, match="only a pending task"):
        board.update(1, require_plan=False)
    assert board.get(1) == before
    updates = [e["details"] for e in board.events() if e["action"] == "updated"]
    assert updates[0]["assignee"] == "alice" and updates[1]["assignee"] is None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"assignee": "Writer"}, "invalid assignee 'Writer'"),
        ({"assignee": "../x"}, "invalid assignee"),
        ({"assignee": "lead"}, "the lead does not claim tasks"),
        ({"role": "a\nb"}, "role must be one line"),
        ({"role": "   "}, "role is empty"),
        ({"role": "x" * 201}, "role is too long"),
        ({"role": "tester\x1b[31m"}, "role must be printable text"),
        ({"require_plan": "yes"}, "require_plan must be true or false"),
    ],
)
def test_bad_routing_input_is_one_line_and_writes_nothing(board, board_backend, kwargs,
                                                         message):
    board.create("seed")
    stamp, seed = board.stamp(), board.get(1)
    listing = sorted(p.name for p in board.dir.iterdir()) if board_backend.files else None
    with pytest.raises(UserError, match=message):
        board.create("x", **kwargs)
    with pytest.raises(UserError, match=message):
        board.update(1, **kwargs)
    if board_backend.files:
        assert sorted(p.name for p in board.dir.iterdir()) == listing
    assert (board.stamp(), board.get(1)) == (stamp, seed)
    assert [t.id for t in board.snapshot().tasks] == [1] and len(board.events()) == 1


def test_fields_are_on_disk_only_when_set_and_old_files_still_read(file_board):
    board = file_board
    board.create("plain")
    board.create("routed", assignee="writer", role="docs", require_plan=True)
    plain = json.loads((board.dir / "task_1.json").read_text())
    routed = json.loads((board.dir / "task_2.json").read_text())
    assert not {"assignee", "role", "require_plan"} & set(plain)
    assert (routed["assignee"], routed["role"], routed["require_plan"]) == ("writer", "docs", True)
    # a file written before these fields existed (exactly the old shape) is a normal task
    old = {k: v for k, v in routed.items() if k not in ("assignee", "role", "require_plan")}
    old["id"] = 3
    (board.dir / "task_3.json").write_text(json.dumps(old))
    fresh = TaskBoard(board.dir)
    task = fresh.get(3)
    assert (task.assignee, task.role, task.require_plan) == (None, None, False)
    assert fresh.claim_next("anyone").task.id == 1


@pytest.mark.parametrize(("key", "value"), [
    ("assignee", "Not A Name"), ("assignee", 7), ("require_plan", "yes"), ("require_plan", 1),
    ("role", ""), ("role", "a\nb"),
])
def test_a_hand_edited_bad_routing_field_is_reported_by_name_and_not_claimable(file_board, key,
                                                                              value):
    board = file_board
    board.create("x")
    path = board.dir / "task_1.json"
    data = json.loads(path.read_text())
    data[key] = value
    path.write_text(json.dumps(data))
    fresh = TaskBoard(board.dir)
    problems = fresh.doctor()
    assert len(problems) == 1 and "task_1.json" in problems[0].path
    assert key in problems[0].message
    assert fresh.claim_next("bob").task is None
