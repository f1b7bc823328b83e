"""Two hosts for real: two clones of one repository sharing a bare remote, one PostgreSQL
database, separate processes, and each "host" with its own host name (AGENT_CLI_HOST).

Host A is the user's clone: the lead runs there headless (`-p --wait`, a scripted model)
and creates two tasks, the second blocked by the first; teammate alice joins there later.
Host B is another clone where teammate bob joins. Bob completes #1 (its branch pushed), then
claims #2, whose command is a `python` this test holds shut; while he waits in it, his whole
host (the process group) is SIGKILLed. After his short lease alice takes #2 and completes
it once; the lead, which waited for teammates of other processes, lands both hosts' work in
its clone beside the user's uncommitted edit; `agent-cli team` shows bob gone for want of
heartbeats, and each member's host. Every wait is on a printed line or a file, never a time.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
from support.cli import cli_env
from support.python_gate import PythonGate
from support.teammate_proc import WAIT, TeammateProcess
from support.worktree import git, git_repo

from agent_cli.pg.stores import open_pg_stores

FIRST = 'Write "first line from a teammate" to one.txt.'
SECOND = 'Run `python --version`, then write "second line from a teammate" to two.txt.'
STALE_S = "5"  # a member silent for 5 s is gone (heartbeats every 1.7 s)
MATE = ["--model", "demo", "--permission-mode", "acceptEdits",
        "--allow", "Bash(python --version)", "--idle-timeout", "0"]


@pytest.fixture
def database(pg_cluster):
    """A database of this test's own on the session's server (the team's schema inside)."""
    import psycopg
    from psycopg import sql

    name = "two_hosts_" + uuid.uuid4().hex[:12]
    with psycopg.connect(pg_cluster.url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    yield pg_cluster.url.rsplit("/", 1)[0] + "/" + name
    with psycopg.connect(pg_cluster.url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)")
                     .format(sql.Identifier(name)))


@pytest.fixture
def clones(tmp_path):
    """(host A's clone, host B's clone, the bare remote), both at the remote's main."""
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    a = tmp_path / "host-a"
    a.mkdir()
    git_repo(a, {"README.md": "a project\n", "notes.txt": "user notes\n"})
    git(a, "remote", "add", "origin", str(origin))
    git(a, "push", "-q", "origin", "main")
    git(tmp_path, "clone", "-q", str(origin), str(tmp_path / "host-b"))
    return a, tmp_path / "host-b", origin


def wait_reached(gate: PythonGate, proc: TeammateProcess) -> None:
    """Until bob runs the gated command (a file the gate's script writes: polled)."""
    deadline = time.monotonic() + WAIT
    pause = threading.Event()
    while not gate.reached.exists():
        assert proc.proc.poll() is None, "\n".join(proc.lines)
        assert time.monotonic() < deadline, "bob never ran the gated command"
        pause.wait(0.01)


def _lead_script(path: Path) -> Path:
    calls = [{"name": "create_task", "input": {"subject": "first", "description": FIRST}},
             {"name": "create_task", "input": {"subject": "second", "description": SECOND,
                                               "blocked_by": [1]}}]
    path.write_text(json.dumps({"lead": [
        {"text": "Two tasks for the team.", "tool_calls": calls},
        {"text": "The tasks are on the board."},
        *[{"text": "Both tasks landed."}] * 9]}))
    return path


def _host(name: str, **extra: str) -> dict[str, str]:
    return {"AGENT_CLI_HOST": name, "AGENT_CLI_HEARTBEAT_STALE_S": STALE_S, **extra}


def _team(workdir: Path, board: list[str]) -> dict[str, list[str]]:
    """`agent-cli team` on host A: each member's row, split on runs of 2+ spaces."""
    shown = subprocess.run([sys.executable, "-m", "agent_cli", "team", "-C", str(workdir),
                            *board], env=cli_env(**_host("host-a")), capture_output=True,
                           text=True, timeout=WAIT)
    assert shown.returncode == 0, shown.stderr
    rows = [re.split(r"\s{2,}", line.strip()) for line in shown.stdout.splitlines()[2:]]
    return {row[0]: row for row in rows if row and row[0]}


def _task_events(url: str) -> dict[int, list[tuple[str, str]]]:
    stores = open_pg_stores(url, "default")
    try:
        rows: dict[int, list[tuple[str, str]]] = {}
        for event in stores.board.events():
            rows.setdefault(event["task_id"], []).append((event["action"], event["actor"]))
        return rows
    finally:
        stores.close()


def _start_lead(a: Path, board: list[str], script: Path) -> subprocess.Popen:
    """Host A's lead: `-p --wait` with a scripted model, its report as JSON on stdout."""
    return subprocess.Popen(
        [sys.executable, "-m", "agent_cli", "-C", str(a), *board, "--model",
         f"script:{_lead_script(script)}", "-p", "Plan the work", "--wait", "--timeout",
         "180", "--output-format", "json"],
        env=cli_env(**_host("host-a")), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)


def _check_landed(a: Path, b: Path, origin: Path) -> None:
    """Both hosts' work in host A's tree beside the user's edit; the branches carry it."""
    assert (a / "one.txt").read_text() == "first line from a teammate\n"
    assert (a / "two.txt").read_text() == "second line from a teammate\n"
    assert (a / "notes.txt").read_text() == "user notes, edited on host A\n"
    for task_id, author, subject in ((1, "bob", "first"), (2, "alice", "second")):
        branch = f"agent-cli/task-{task_id}"  # pushed by its host, fetched by host A
        assert git(origin, "log", "-1", "--format=%an", branch).strip() == author
        commits = git(a, "log", "--format=%an|%s", branch).splitlines()
        assert f"{author}|task #{task_id}: {subject}" in commits
    assert git(a, "log", "--format=%s", "main").splitlines() == ["start"]  # HEAD stays
    assert sorted(git(a, "status", "--short").splitlines()) == [
        " M notes.txt", "?? one.txt", "?? two.txt"]
    assert not (b / "one.txt").exists()  # bob's own clone: its tree untouched


def _check_events(url: str) -> None:
    """Each task completed exactly once; #2 went from bob to alice by the lease."""
    events = _task_events(url)
    assert [e for e in events[1] if e[0] != "created"] == [
        ("claimed", "bob"), ("completed", "bob")]
    changes = [e for e in events[2] if e[0] != "created"]
    assert [e[0] for e in changes] == ["claimed", "lease_expired", "claimed", "completed"]
    assert [changes[0][1], changes[2][1], changes[3][1]] == ["bob", "alice", "alice"]


def test_a_killed_host_loses_its_task_to_the_other_host_and_the_lead_lands_both(
        tmp_path, clones, database):
    a, b, origin = clones
    gate = PythonGate(tmp_path)
    board = ["--board", database]
    bob = TeammateProcess(b, "bob", *board, *MATE, "--lease", "5", env=_host(
        "host-b", PATH=gate.path_with(os.environ["PATH"])))
    alice = lead = None
    try:
        assert "bob joined team default as teammate on host-b" in bob.wait_line("joined")
        (a / "notes.txt").write_text("user notes, edited on host A\n")  # never committed
        lead = _start_lead(a, board, tmp_path / "lead.json")
        bob.wait_line("completed #1")
        bob.wait_line("claimed #2 second")
        wait_reached(gate, bob)
        alice = TeammateProcess(a, "alice", *board, *MATE, env=_host("host-a"))
        alice.wait_line("joined team default as teammate on host-a")
        os.killpg(bob.proc.pid, signal.SIGKILL)  # host B disappears, mid-task
        bob.wait()
        gate.open()
        alice.wait_line("claimed #2 second")
        alice.wait_line("completed #2")
        out, err = lead.communicate(timeout=WAIT * 3)
        assert lead.returncode == 0, err
        report = json.loads(out)
        assert report["outcome"] == "completed", report

        _check_landed(a, b, origin)
        _check_events(database)

        rows = _team(a, board)
        assert rows["bob"][2:4] == [f"gone (no heartbeat for {STALE_S} s)", "host-b"]
        assert rows["alice"][2:4] == ["idle", "host-a"]
        alice.signal(signal.SIGTERM)
        alice.wait_line("shut down")
        assert alice.wait() == 130
    finally:
        gate.open()
        if lead is not None and lead.poll() is None:
            lead.kill()
            lead.communicate(timeout=WAIT)
        for mate in (bob, alice):
            if mate is not None and mate.proc.poll() is None:
                os.killpg(mate.proc.pid, signal.SIGKILL)
                mate.proc.wait(WAIT)
