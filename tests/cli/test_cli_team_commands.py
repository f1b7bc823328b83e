"""`agent-cli team`, `inbox`, `send`: handlers in-process, and the real command line."""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent_cli.cli import workdir_parent
from agent_cli.commands import team as team_cmd
from agent_cli.errors import InvalidName, NotFound, UserError
from agent_cli.team.mailbox import Mailbox
from agent_cli.team.roster import Roster


def run(workdir: Path, *argv: str) -> int:
    """Parse `argv` with the parsers commands/team.py registers and run the handler."""
    parser = argparse.ArgumentParser(prog="agent-cli")
    team_cmd.add_parsers(parser.add_subparsers(dest="command"), workdir_parent())
    args = parser.parse_args([*argv, "-C", str(workdir)])
    return args.handler(args)


@pytest.fixture
def team(workdir: Path) -> Roster:
    roster = Roster(workdir / ".team")
    roster.add("alice", "tester")
    roster.add("bob", "reviewer")
    roster.update("alice", status="working", current_task=3)
    roster.update("bob", idle_reason="no claimable task: #3 waits for #1, #2")
    return roster


def test_team_table_shows_status_task_and_idle_reason(workdir, team, capsys) -> None:
    assert run(workdir, "team") == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "team default: 2 members"
    assert out[1].split() == [
        "NAME",
        "ROLE",
        "STATUS",
        "HOST",
        "TASK",
        "IDLE",
        "REASON",
        "UPDATED",
        "(UTC)",
    ]
    assert out[2].split()[:6] == ["alice", "tester", "working", "-", "#3", "-"]
    assert out[3].split()[:5] == ["bob", "reviewer", "idle", "-", "-"]
    assert "no claimable task: #3 waits for #1, #2" in out[3]


def test_team_table_shows_the_host_each_member_runs_on(workdir, team, capsys) -> None:
    team.update("alice", pid=4242, host="build-07", status="shutdown")
    assert run(workdir, "team") == 0
    rows = {line.split()[0]: line.split() for line in capsys.readouterr().out.splitlines()[2:]}
    assert rows["alice"][2:4] == ["shutdown", "build-07"]
    assert rows["bob"][3] == "-"  # never started by a process: no host


def test_team_json_is_the_config_members(workdir, team, capsys) -> None:
    assert run(workdir, "team", "--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert data["team"] == "default" and data["problem"] is None
    assert [(m["name"], m["status"], m["current_task"]) for m in data["members"]] == [
        ("alice", "working", 3),
        ("bob", "idle", None),
    ]


def test_team_with_a_corrupt_config_names_the_file_and_fails(workdir, capsys) -> None:
    (workdir / ".team").mkdir()
    (workdir / ".team" / "config.json").write_text("{nope")
    assert run(workdir, "team") == 1
    captured = capsys.readouterr()
    assert "no members" in captured.out
    assert "config.json" in captured.err and captured.err.count("\n") == 1
    assert (workdir / ".team" / "config.json").read_text() == "{nope"


def test_send_prints_the_id_and_inbox_peeks_without_consuming(workdir, team, capsys) -> None:
    assert run(workdir, "send", "--from", "lead", "--to", "alice", "run", "the", "tests") == 0
    msg_id = capsys.readouterr().out.strip()
    mail = Mailbox(workdir / ".team")
    (msg,) = mail.peek("alice")
    assert (msg.id, msg.sender, msg.type, msg.content) == (
        msg_id,
        "lead",
        "message",
        "run the tests",
    )
    for _ in range(2):  # peeking twice shows the same message: nothing was consumed
        assert run(workdir, "inbox", "alice") == 0
        out = capsys.readouterr().out.splitlines()
        assert out[0] == "1 unread message for alice:"
        assert out[1].endswith("lead [message]: run the tests")
    assert mail.cursor("alice") == 0
    assert run(workdir, "inbox", "alice", "--json") == 0
    (data,) = json.loads(capsys.readouterr().out)
    assert data["id"] == msg_id and data["from"] == "lead" and data["to"] == "alice"


def test_inbox_of_someone_with_no_mail(workdir, capsys) -> None:
    assert run(workdir, "inbox", "lead") == 0
    assert capsys.readouterr().out.strip() == "no unread messages for lead"
    assert run(workdir, "inbox", "lead", "--json") == 0
    assert json.loads(capsys.readouterr().out) == []


@pytest.mark.parametrize(
    "argv, error, text",
    [
        (("send", "--from", "lead", "--to", "carol", "hi"), NotFound, "no teammate 'carol'"),
        (("send", "--from", "lead", "--to", "../x", "hi"), InvalidName, "invalid recipient"),
        (("send", "--from", "Lead", "--to", "alice", "hi"), InvalidName, "invalid sender"),
        (("send", "--from", "lead", "--to", "alice", "  "), UserError, "empty message"),
        (("inbox", "/etc"), InvalidName, "invalid inbox name"),
    ],
)
def test_refusals_change_nothing(workdir, team, argv, error, text) -> None:
    before = sorted(p.name for p in (workdir / ".team").rglob("*"))
    with pytest.raises(error, match=text):
        run(workdir, *argv)
    assert sorted(p.name for p in (workdir / ".team").rglob("*")) == before


def test_send_checks_both_ends_against_the_team(workdir, capsys) -> None:
    # --from is held to the same rule as --to: lead or a member, so a reply has somewhere
    # to go; nothing is written for a refused name.
    with pytest.raises(NotFound, match="no teammate 'alice' .* sender .*known: lead"):
        run(workdir, "send", "--from", "alice", "--to", "lead", "done with #3")
    assert Mailbox(workdir / ".team").peek("lead") == []
    Roster(workdir / ".team").add("alice", "tester")
    assert run(workdir, "send", "--from", "alice", "--to", "lead", "done with #3") == 0
    assert [m.content for m in Mailbox(workdir / ".team").peek("lead")] == ["done with #3"]
    help_text = subprocess.run([sys.executable, "-m", "agent_cli", "send", "--help"],
                               capture_output=True, text=True, timeout=60).stdout
    assert "Both --from and --to must be `lead` or a member of the team" in " ".join(
        help_text.split())


needs_full_cli = pytest.mark.skipif(
    importlib.util.find_spec("agent_cli.commands.tasks") is None,
    reason="agent_cli/commands/tasks.py (imported by cli.py) is not written yet",
)


def agent_cli(workdir: Path, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "agent_cli", "-C", str(workdir), *argv],
        capture_output=True,
        text=True,
        timeout=60,
    )


@needs_full_cli
def test_cli_send_then_inbox_then_team_from_another_process(workdir, team) -> None:
    sent = agent_cli(workdir, "send", "--from", "lead", "--to", "bob", "please", "review")
    assert sent.returncode == 0, sent.stderr
    msg_id = sent.stdout.strip()
    inbox = agent_cli(workdir, "inbox", "bob", "--json")
    assert inbox.returncode == 0
    assert [m["id"] for m in json.loads(inbox.stdout)] == [msg_id]
    shown = agent_cli(workdir, "team")
    assert shown.returncode == 0 and "alice" in shown.stdout and "#3" in shown.stdout


@needs_full_cli
@pytest.mark.parametrize(
    "argv, code, text",
    [
        (("send", "--from", "lead", "--to", "carol", "hi"), 3, "no teammate 'carol'"),
        (("send", "--from", "lead", "--to", "../x", "hi"), 2, "invalid recipient name"),
        (("inbox", "Alice"), 2, "invalid inbox name"),
    ],
)
def test_cli_refusal_is_one_line_and_non_zero(workdir, team, argv, code, text) -> None:
    result = agent_cli(workdir, *argv)
    assert result.returncode == code
    assert result.stderr.count("\n") == 1 and text in result.stderr
    assert "Traceback" not in result.stderr
