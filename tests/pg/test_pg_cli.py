"""Every board command on a database board, as real processes: `--board URL` or
$AGENT_CLI_BOARD, two workdirs seeing one board, the team name choosing the team's schema,
and the workdir left without a `.tasks/` or `.team/` of its own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.pg_cli import agent, seed_members

from agent_cli.stores import BoardLocation, open_stores

pytest.importorskip("psycopg")


def test_every_tasks_verb_works_on_the_database_and_writes_nothing_here(
        tmp_path: Path, pg_database: str) -> None:
    here = tmp_path / "here"
    here.mkdir()
    b = ("--board", pg_database)
    assert agent(here, "tasks", "add", "Write parser", *b).stdout == "1\n"
    assert agent(here, "tasks", "add", "Integrate", "--blocked-by", "1", *b).stdout == "2\n"
    assert agent(here, "tasks", "add", "Docs", *b).stdout == "3\n"
    shown = agent(here, "tasks", "update", "3", "--blocked-by", "2", *b)
    assert shown.returncode == 0 and "blocked by:  #2" in shown.stdout
    claimed = json.loads(agent(here, "tasks", "claim", "--as", "alice", "--json", *b).stdout)
    assert (claimed["id"], claimed["owner"]) == (1, "alice")
    refused = agent(here, "tasks", "claim", "2", "--as", "bob", *b)
    assert refused.returncode == 4 and "blocked by #1" in refused.stderr
    done = agent(here, "tasks", "complete", "1", "--as", "alice", "--token",
                 claimed["claim_token"], "--result", "parser done", *b)
    assert done.returncode == 0 and "now claimable: #2" in done.stdout
    assert agent(here, "tasks", "claim", "--as", "bob", *b).returncode == 0
    released = agent(here, "tasks", "release", "2", "--as", "bob", *b)
    assert released.returncode == 0 and "pending again" in released.stdout
    show = agent(here, "tasks", "show", "1", *b).stdout
    assert "status:      completed" in show and "result:      parser done" in show
    listed = json.loads(agent(here, "tasks", "list", "--json", *b).stdout)
    assert [(t["id"], t["status"], t["owner"]) for t in listed] == [
        (1, "completed", "alice"), (2, "pending", None), (3, "pending", None)]
    doctor = agent(here, "tasks", "doctor", *b)
    assert (doctor.returncode, doctor.stdout) == (0, "board OK: 3 tasks, no problems\n")
    graph = agent(here, "tasks", "graph", *b).stdout
    assert "2 dependencies" in graph and "#1 Write parser" in graph
    assert list(here.iterdir()) == []  # the board is the database's, not this workdir's


def test_team_inbox_send_and_watch_read_the_database(tmp_path: Path,
                                                     pg_database: str) -> None:
    here = tmp_path / "here"
    here.mkdir()
    seed_members(pg_database, "default", {"alice": "coder", "bob": "reviewer"})
    b = ("--board", pg_database)
    agent(here, "tasks", "add", "Write parser", *b)
    agent(here, "tasks", "claim", "--as", "alice", *b)
    sent = agent(here, "send", "--from", "bob", "--to", "alice", "please", "hurry", *b)
    assert sent.returncode == 0, sent.stderr
    inbox = json.loads(agent(here, "inbox", "alice", "--json", *b).stdout)
    assert [(m["from"], m["content"]) for m in inbox] == [("bob", "please hurry")]
    assert "please hurry" in agent(here, "inbox", "alice", *b).stdout  # consumes nothing
    team = json.loads(agent(here, "team", "--json", *b).stdout)
    assert {m["name"]: m["role"] for m in team["members"]} == {"alice": "coder",
                                                                "bob": "reviewer"}
    assert "alice" in agent(here, "team", *b).stdout
    frame = agent(here, "watch", "--once", "--width", "100", *b).stdout
    assert "#1 Write parser" in frame and "@alice" in frame and "alice claimed #1" in frame
    assert list(here.iterdir()) == []


def test_the_variable_chooses_the_board_and_two_workdirs_see_one_board(
        tmp_path: Path, pg_database: str) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    env = {"AGENT_CLI_BOARD": pg_database}
    assert agent(one, "tasks", "add", "From one", env=env).stdout == "1\n"
    assert agent(two, "tasks", "add", "From two", env=env).stdout == "2\n"
    claimed = agent(two, "tasks", "claim", "1", "--as", "carol", env=env)
    assert claimed.returncode == 0, claimed.stderr
    again = agent(one, "tasks", "claim", "1", "--as", "dave", env=env)
    assert again.returncode == 4  # one board: what two claimed, one cannot take
    seen = json.loads(agent(one, "tasks", "list", "--json", env=env).stdout)
    assert [(t["subject"], t["owner"]) for t in seen] == [("From one", "carol"),
                                                          ("From two", None)]
    assert list(one.iterdir()) == [] and list(two.iterdir()) == []
    files = agent(one, "tasks", "list")  # without the variable: this workdir's own files
    assert files.returncode == 0 and "From one" not in files.stdout


def test_two_teams_in_one_database_are_separate(tmp_path: Path, pg_database: str) -> None:
    red = open_stores(tmp_path, BoardLocation("postgresql", pg_database, "red"))
    try:
        red.board.create("Red work")
    finally:
        red.close()
    here = tmp_path / "here"
    here.mkdir()
    agent(here, "tasks", "add", "Default work", "--board", pg_database)
    listed = json.loads(agent(here, "tasks", "list", "--json", "--board", pg_database).stdout)
    assert [t["subject"] for t in listed] == ["Default work"]
    red = open_stores(tmp_path, BoardLocation("postgresql", pg_database, "red"))
    try:
        assert [t.subject for t in red.board.snapshot().tasks] == ["Red work"]
        assert red.database.schema == "agent_cli_red"
    finally:
        red.close()


def test_the_team_flag_and_variable_choose_the_team_in_one_database(
        tmp_path: Path, pg_database: str) -> None:
    here = tmp_path / "here"
    here.mkdir()
    b = ("--board", pg_database)
    assert agent(here, "tasks", "add", "Red work", "--team", "red", *b).returncode == 0
    assert agent(here, "tasks", "add", "Blue work", *b,
                 env={"AGENT_CLI_TEAM": "blue"}).returncode == 0
    assert agent(here, "tasks", "add", "Default work", *b).returncode == 0

    def subjects(*extra: str, env: dict[str, str] | None = None) -> list[str]:
        out = agent(here, "tasks", "list", "--json", *b, *extra, env=env)
        assert out.returncode == 0, out.stderr
        return [t["subject"] for t in json.loads(out.stdout)]

    assert subjects("--team", "red") == ["Red work"]
    assert subjects(env={"AGENT_CLI_TEAM": "blue"}) == ["Blue work"]
    assert subjects("--team", "red", env={"AGENT_CLI_TEAM": "blue"}) == ["Red work"]
    assert subjects() == ["Default work"]
    bad = agent(here, "tasks", "list", "--team", "no such/team", *b)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
