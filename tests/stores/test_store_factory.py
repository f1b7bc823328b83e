"""stores.open_stores is the one place the team's stores are built: every command and the
session read and write the board, inboxes and roster the factory hands them (a stand-in
backend keeps them in another directory, so a verb that built its own stores from the
workdir would show on disk); --board without the PostgreSQL backend is one line, exit 2."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

from agent_cli import stores
from agent_cli.board import TaskBoard
from agent_cli.cli import main
from agent_cli.runtime import Runtime, RuntimeConfig
from agent_cli.storeset import BoardLocation
from agent_cli.team.mailbox import Mailbox
from agent_cli.team.roster import Roster

URL = "postgresql://ann:s3cret@db.example/team"


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    """Where the stand-in database backend keeps the team: not the workdir."""
    d = tmp_path / "remote"
    d.mkdir()
    return d


@pytest.fixture
def backend(remote: Path, monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    """A stand-in agent_cli.pg.stores whose stores live in `remote`; returns its calls."""
    calls: list[dict] = []
    woken: list[object] = []

    def open_pg_stores(url, team, *, workdir, on_change=None, on_event=None, lease_s=None):
        calls.append({"url": url, "team": team, "workdir": workdir, "lease_s": lease_s})
        opened = stores.open_file_stores(remote, BoardLocation("postgresql", url, team),
                                         on_change=on_change, on_event=on_event,
                                         lease_s=lease_s)
        opened.make_wakeups = lambda notify: woken.append(notify) or Waker()
        # liveness is the backend's to tell (a database: heartbeats, not pids)
        opened.roster.gone_reason = lambda m: ("no heartbeat for 45 s"
                                               if m.status == "working" else None)
        return opened

    fake = types.ModuleType("agent_cli.pg.stores")
    fake.open_pg_stores = open_pg_stores
    monkeypatch.setitem(sys.modules, "agent_cli.pg", types.ModuleType("agent_cli.pg"))
    monkeypatch.setitem(sys.modules, "agent_cli.pg.stores", fake)
    return calls


class Waker:
    active = False

    def start(self) -> bool:
        return False

    def close(self) -> None:
        pass


def cli(workdir: Path, *argv: str) -> int:
    return main(["-C", str(workdir), "--board", URL, *argv])


def test_every_verb_uses_the_board_the_factory_opens(workdir, remote, backend, capsys) -> None:
    Roster(remote / ".team").add("alice", "tester")  # a member of the remote team only
    assert cli(workdir, "tasks", "add", "first") == 0
    assert cli(workdir, "tasks", "add", "second", "--blocked-by", "1", "--role", "tester") == 0
    assert cli(workdir, "tasks", "add", "third") == 0
    assert cli(workdir, "tasks", "update", "3", "--assign", "alice") == 0
    assert cli(workdir, "tasks", "claim", "1", "--as", "alice") == 0
    assert cli(workdir, "tasks", "complete", "1", "--as", "alice", "--result", "ok") == 0
    assert cli(workdir, "tasks", "claim", "2", "--as", "alice") == 0  # her role, remotely
    assert cli(workdir, "send", "--from", "alice", "--to", "lead", "hello lead") == 0
    capsys.readouterr()
    expected = {("tasks", "list"): "second", ("tasks", "show", "2"): "in_progress",
                ("tasks", "graph"): "third", ("team",): "team default: 1 member",
                ("inbox", "lead"): "hello lead", ("tasks", "doctor"): "board OK: 3 tasks",
                ("watch", "--once", "--width", "300"): "(postgresql://ann:***@db.example/team)"}
    for verb, seen in expected.items():
        assert cli(workdir, *verb) == 0, verb
        out = capsys.readouterr().out
        assert seen in out and "s3cret" not in out, verb
    board = TaskBoard(remote / ".tasks")
    assert (board.get(1).status, board.get(1).result) == ("completed", "ok")
    assert board.get(2).owner == "alice" and board.get(3).assignee == "alice"
    assert [m.content for m in Mailbox(remote / ".team").peek("lead")] == ["hello lead"]
    assert not (workdir / ".tasks").exists() and not (workdir / ".team" / "inbox").exists()
    assert {c["url"] for c in backend} == {URL} and {c["team"] for c in backend} == {"default"}
    assert {c["workdir"] for c in backend} == {workdir.resolve()}


def test_release_and_a_refusal_go_through_it_too(workdir, remote, backend, capsys) -> None:
    assert cli(workdir, "tasks", "add", "one") == 0
    assert cli(workdir, "tasks", "claim", "1", "--as", "bob") == 0
    assert cli(workdir, "tasks", "claim", "1", "--as", "carol") == 4  # held by bob, remotely
    assert cli(workdir, "tasks", "release", "1", "--as", "bob") == 0
    assert TaskBoard(remote / ".tasks").get(1).status == "pending"


def test_the_session_takes_its_stores_and_wakeups_from_the_factory(workdir, remote,
                                                                   backend) -> None:
    rt = Runtime.open(workdir, RuntimeConfig(board=URL, team_name="red", lease_s=30.0))
    try:
        assert rt.stores.location == BoardLocation("postgresql", URL, "red")
        rt.board.create("from the session")
        assert TaskBoard(remote / ".tasks").get(1).subject == "from the session"
        assert rt.roster.team_name == "red" and isinstance(rt.watcher, Waker)
        assert backend == [{"url": URL, "team": "red", "workdir": workdir.resolve(),
                            "lease_s": 30.0}]
    finally:
        rt.close()
    assert not (workdir / ".tasks").exists()


def test_without_a_board_the_session_keeps_the_workdirs_files(workdir) -> None:
    from agent_cli.filewatch import FileWatcher

    rt = Runtime.open(workdir, RuntimeConfig())
    try:
        assert rt.stores.location.kind == "files" and rt.stores.files
        assert isinstance(rt.watcher, FileWatcher)
        rt.board.create("local")
        assert (workdir / ".tasks" / "task_1.json").is_file()
    finally:
        rt.close()


@pytest.mark.parametrize("missing", ["module", "psycopg"])
def test_no_backend_installed_is_one_line_exit_2(workdir, monkeypatch, capsys,
                                                 missing) -> None:
    if missing == "module":
        monkeypatch.setitem(sys.modules, "agent_cli.pg.stores", None)  # import fails
    else:
        def open_pg_stores(*args, **kwargs):
            raise ModuleNotFoundError("No module named 'psycopg'", name="psycopg")

        fake = types.ModuleType("agent_cli.pg.stores")
        fake.open_pg_stores = open_pg_stores
        monkeypatch.setitem(sys.modules, "agent_cli.pg", types.ModuleType("agent_cli.pg"))
        monkeypatch.setitem(sys.modules, "agent_cli.pg.stores", fake)
    for verb in (["tasks", "list"], ["team"], ["send", "--from", "lead", "--to", "lead", "x"]):
        assert cli(workdir, *verb) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "pip install 'agent-cli[postgres]'" in err
        assert "s3cret" not in err and "ann:***@db.example" in err
    assert not (workdir / ".tasks").exists() and not (workdir / ".team").exists()


def test_a_bad_board_url_changes_nothing(workdir, capsys) -> None:
    code = main(["-C", str(workdir), "tasks", "add", "x", "--board", "mysql://ann:s3cret@h/db"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "not a PostgreSQL URL" in err
    assert "s3cret" not in err and not (workdir / ".tasks").exists()


def test_the_variable_picks_the_backend_for_commands(workdir, remote, backend, monkeypatch,
                                                     capsys) -> None:
    monkeypatch.setenv("AGENT_CLI_BOARD", URL)
    assert main(["-C", str(workdir), "tasks", "add", "via env"]) == 0
    assert TaskBoard(remote / ".tasks").get(1).subject == "via env"
    assert len(backend) == 1


def test_team_says_gone_as_the_backends_roster_tells(workdir, remote, backend, capsys) -> None:
    Roster(remote / ".team").add("alice", "tester")
    Roster(remote / ".team").update("alice", status="working", current_task=1)
    assert cli(workdir, "team") == 0
    assert "gone (no heartbeat for 45 s)" in capsys.readouterr().out
    assert cli(workdir, "team", "--json") == 0
    assert '"gone": "no heartbeat for 45 s"' in capsys.readouterr().out
