"""Every command's output ends with a newline, so the next shell prompt (or a message that
arrives next) never glues onto it: team, inbox, send, tasks, graph and watch frames."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support.cli import cli_env

from agent_cli.board import TaskBoard
from agent_cli.cli import main
from agent_cli.team.mailbox import Mailbox
from agent_cli.team.roster import Roster


@pytest.fixture
def busy(workdir: Path) -> Path:
    board = TaskBoard(workdir / ".tasks")
    board.create("first")
    board.create("second", blocked_by=[1])
    roster = Roster(workdir / ".team")
    roster.add("alice", "tester")
    roster.update("alice", idle_reason="no claimable task:\n#2 waits for #1")  # two lines
    Mailbox(workdir / ".team").send("alice", "lead", "a note\nwith a second line")
    return workdir


COMMANDS = [
    ("team",), ("team", "--json"), ("inbox", "lead"), ("inbox", "lead", "--json"),
    ("inbox", "alice"), ("send", "--from", "lead", "--to", "alice", "hi"),
    ("tasks", "list"), ("tasks", "list", "--json"), ("tasks", "show", "1"),
    ("tasks", "doctor"), ("tasks", "graph"), ("tasks", "graph", "--format", "mermaid"),
    ("tasks", "graph", "--format", "dot"), ("tasks", "add", "third"),
    ("tasks", "claim", "--as", "bob"), ("watch", "--once"),
]


@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
def test_output_ends_with_a_newline(busy: Path, capsys, argv: tuple[str, ...]) -> None:
    main(["-C", str(busy), *argv])
    out = capsys.readouterr().out
    assert out and out.endswith("\n"), repr(out[-80:])
    assert not out.endswith("\n\n\n")


@pytest.mark.parametrize("argv", [("team",), ("inbox", "lead"), ("tasks", "list"),
                                  ("tasks", "graph"), ("watch", "--once")], ids=" ".join)
def test_an_empty_workdir_prints_whole_lines_too(workdir: Path, capsys, argv) -> None:
    main(["-C", str(workdir), *argv])
    out = capsys.readouterr().out
    assert out.endswith("\n") and out.strip()


def test_a_multi_line_idle_reason_stays_one_row_of_the_team_table(busy: Path, capsys) -> None:
    main(["-C", str(busy), "team"])
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 and "no claimable task: #2 waits for #1" in lines[2]


def test_a_reader_that_closes_the_pipe_gets_no_traceback(workdir: Path) -> None:
    board = TaskBoard(workdir / ".tasks")
    for i in range(400):  # far more JSON than a pipe buffer holds
        board.create(f"task {i} " + "x" * 150, description="y" * 300)
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent_cli", "-C", str(workdir), "tasks", "list", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=cli_env(),
    )
    assert proc.stdout.readline().strip() == b"["  # what `| head -1` reads
    proc.stdout.close()
    err = proc.stderr.read().decode()
    code = proc.wait(60)
    proc.stderr.close()
    assert "Traceback" not in err and "BrokenPipe" not in err
    assert err == ""
    assert code == 1  # documented: the output could not all be written
