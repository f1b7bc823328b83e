"""`agent-cli tasks add --assign/--role/--require-plan`, `tasks update`, and how list, show,
--json and claim treat routed tasks; bad input is one line and changes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_cli.cli import main
from agent_cli.team.roster import Roster


@pytest.fixture
def cli(workdir: Path, capsys):
    def call(*args: str) -> tuple[int, str, str]:
        code = main(["-C", str(workdir), "tasks", *args])
        out, err = capsys.readouterr()
        return code, out, err

    return call


def test_add_list_show_and_json_carry_the_routing(cli, workdir: Path) -> None:
    assert cli("add", "Write notes", "--assign", "writer", "--require-plan")[:2] == (0, "1\n")
    assert cli("add", "Run tests", "--role", "tester")[:2] == (0, "2\n")
    assert cli("add", "Anything")[:2] == (0, "3\n")
    code, out, _ = cli("list")
    lines = out.splitlines()
    assert lines[0].split() == ["ID", "SUBJECT", "OWNER", "FOR", "BLOCKED", "BY", "RESULT"]
    assert "@writer +plan" in lines[1] and "role tester" in lines[2]
    assert "note: #1 is assigned to writer, who is not on the team" in lines
    assert "note: #2 is for role 'tester', which no running teammate has" in lines
    code, out, _ = cli("show", "1")
    assert "assignee:    writer" in out and "plan:        required" in out
    data = json.loads(cli("list", "--json")[1])
    assert data[0]["assignee"] == "writer" and data[0]["require_plan"] is True
    assert data[1]["role"] == "tester" and "assignee" not in data[1]
    assert not {"assignee", "role", "require_plan"} & set(data[2])
    on_disk = json.loads((workdir / ".tasks" / "task_1.json").read_text())
    assert on_disk == data[0]


def test_a_board_without_routing_lists_as_before(cli) -> None:
    cli("add", "A")
    header = cli("list")[1].splitlines()[0]
    assert header.split() == ["ID", "SUBJECT", "OWNER", "BLOCKED", "BY", "RESULT"]


def test_claim_uses_the_role_the_name_has_on_the_team(cli, workdir: Path) -> None:
    Roster(workdir / ".team").add("tess", "Tester")
    cli("add", "Run tests", "--role", "tester")
    cli("add", "Write notes", "--assign", "writer")
    code, _, err = cli("claim", "1", "--as", "bob")
    assert (code, err) == (4, "agent-cli: task 1 is for role 'tester' (bob has no role)\n")
    code, _, err = cli("claim", "2", "--as", "tess")
    assert (code, err) == (4, "agent-cli: task 2 is assigned to writer\n")
    code, _, err = cli("claim", "--as", "bob")
    assert code == 4 and "#1 is for role 'tester'" in err and "#2 is assigned to writer" in err
    code, out, _ = cli("claim", "--as", "tess")
    assert code == 0 and out.startswith("#1 claimed by tess")
    assert cli("claim", "--as", "writer")[1].startswith("#2 claimed by writer")


def test_update_reassigns_a_pending_task_and_refuses_one_in_progress(cli) -> None:
    cli("add", "Write notes", "--assign", "writer")
    code, out, _ = cli("update", "1", "--assign", "alice", "--require-plan")
    assert code == 0 and "assignee:    alice" in out and "plan:        required" in out
    code, out, _ = cli("update", "1", "--unassign", "--role", "docs", "--no-require-plan")
    assert code == 0 and "role:        docs" in out and "assignee" not in out
    assert "plan:" not in out
    assert cli("claim", "1", "--as", "dora")[0] == 4  # dora has no role: refused
    assert cli("update", "1", "--any-role")[0] == 0
    assert cli("claim", "1", "--as", "dora")[0] == 0
    code, out, err = cli("update", "1", "--assign", "bob")
    assert (code, out) == (4, "")
    assert err == ("agent-cli: task 1 is in_progress (owned by dora): only a pending task can "
                   "be reassigned\n")


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["add", "x", "--assign", "Writer"], 2, "invalid assignee 'Writer'"),
        (["add", "x", "--assign", "lead"], 2, "the lead does not claim tasks"),
        (["add", "x", "--assign", ""], 2, "--assign is empty"),
        (["add", "x", "--role", " "], 2, "--role is empty"),
        (["add", "x", "--assign", "tess", "--role", "coder"], 2,
         "tess's role is 'tester', not 'coder'"),
        (["update", "1"], 2, "nothing to update"),
        (["update", "1", "--assign", "bob", "--unassign"], 2,
         "--assign and --unassign contradict each other"),
        (["update", "1", "--role", "x", "--any-role"], 2, "--role and --any-role contradict"),
        (["update", "1", "--require-plan", "--no-require-plan"], 2, "--require-plan and"),
        (["update", "1", "--assign", "../etc"], 2, "invalid assignee '../etc'"),
        (["update", "9", "--assign", "bob"], 3, "no task 9"),
        (["update", "2", "--assign", "bob"], 4, "task 2 is in_progress (owned by tess)"),
    ],
)
def test_bad_routing_input_is_one_line_and_changes_nothing(cli, workdir: Path, args, code,
                                                            message) -> None:
    Roster(workdir / ".team").add("tess", "tester")
    cli("add", "A", "--assign", "writer")
    cli("add", "B")
    cli("claim", "2", "--as", "tess")
    before = {p.name: p.read_bytes() for p in (workdir / ".tasks").iterdir()}
    got, out, err = cli(*args)
    assert (got, out) == (code, "")
    assert err.startswith(f"agent-cli: {message}") and err.count("\n") == 1, err
    assert {p.name: p.read_bytes() for p in (workdir / ".tasks").iterdir()} == before
