"""Sessions on a database board: a headless demo run whose in-process teammates claim and
complete on the database, `-c` resuming it, and an idle teammate woken through LISTEN by a
task another process adds (the re-check intervals are a minute: polling cannot do it)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from support.pg_cli import agent
from support.team import WAIT, complete_claimed, make_runtime

from agent_cli.models.scripted import ScriptedModel
from agent_cli.stores import BoardLocation, open_stores
from agent_cli.team.roster import this_host

pytest.importorskip("psycopg")

BOARD_PROMPT = "Create 3 tasks on the board, then spawn alice and bob. Watch them auto-claim."
DEMO = ("--model", "demo", "--permission-mode", "acceptEdits",
        "--allow", "Bash(python --version)", "--timeout", "60")


def board_tasks(url: str, workdir: Path) -> list[tuple[str, str, str | None]]:
    stores = open_stores(workdir, BoardLocation("postgresql", url, "default"))
    try:
        return [(t.subject, t.status, t.owner) for t in stores.board.snapshot().tasks]
    finally:
        stores.close()


def test_a_headless_demo_run_and_its_continuation_work_on_the_database(
        workdir: Path, pg_database: str) -> None:
    b = ("--board", pg_database)
    run = agent(workdir, *DEMO, *b, "-p", BOARD_PROMPT, "--wait", "--output-format", "json")
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["outcome"] == "completed"
    done = board_tasks(pg_database, workdir)
    assert len(done) == 3 and {s for _, s, _ in done} == {"completed"}
    assert {o for _, _, o in done} <= {"alice", "bob"}
    assert not (workdir / ".tasks").exists()  # the board is the database's
    assert (workdir / "hello.txt").exists()  # the teammates' work is this host's

    again = agent(workdir, *DEMO, "-c", "-p", "Shut down alice", "--wait",
                  env={"AGENT_CLI_BOARD": pg_database})  # the variable, as a user's shell
    assert again.returncode == 0, again.stderr
    assert "request_shutdown alice" in again.stdout and "outcome: completed" in again.stdout
    team = json.loads(agent(workdir, "team", "--json", *b).stdout)
    assert {m["name"]: m["status"] for m in team["members"]} == {"alice": "shutdown",
                                                                  "bob": "shutdown"}
    rows = agent(workdir, "--resume", *b).stdout.splitlines()[1:-1]
    assert len(rows) == 1 and "Shut down alice" in rows[0]  # one session, continued


def test_a_task_added_by_another_process_wakes_an_idle_teammate_through_listen(
        workdir: Path, pg_database: str) -> None:
    asked = threading.Event()
    seen: list[str] = []

    def answer(request):
        seen.append(request.messages[-1].text())
        asked.set()
        return complete_claimed("noted")(request)

    model = ScriptedModel({"alice": [answer]})
    rt = make_runtime(workdir, model, board=pg_database, check_interval_s=60.0,
                      watched_interval_s=60.0)
    try:
        rt.team.spawn("alice", "helper")
        assert rt.team.wait_quiet(WAIT), "alice never went idle"
        assert rt.watcher.active  # LISTENing: waiters sleep the full minute between checks
        team = json.loads(agent(workdir.parent, "team", "--json", "--board",
                                pg_database).stdout)
        [alice] = team["members"]  # another process sees her running here
        assert (alice["name"], alice["status"], alice["host"]) == ("alice", "idle",
                                                                   this_host())
        added = agent(workdir.parent, "tasks", "add", "cross-process task", "--board",
                      pg_database)
        assert added.returncode == 0, added.stderr
        assert asked.wait(WAIT), "a task added by another process did not wake alice"
        assert "cross-process task" in seen[0]
        assert rt.team.wait_quiet(WAIT)
    finally:
        rt.close(WAIT)
    assert board_tasks(pg_database, workdir) == [("cross-process task", "completed", "alice")]
    assert not rt.watcher.active
