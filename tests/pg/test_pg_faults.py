"""Server faults under a running session on a database board: the server restarted while the
teammates are idle and while one holds a task, its connections terminated under the lease
renewer; the run goes on (the Listener reconnects, the next claim and complete work, nothing
double-owned, nothing lost). A server that is down at start, or a schema from a newer
agent-cli, is one line and an exit code, and nothing is written."""

from __future__ import annotations

import threading
from pathlib import Path

import psycopg
import pytest
from support.pg_cli import agent
from support.team import WAIT, Recorder, complete_claimed, make_runtime

from agent_cli.models.scripted import ScriptedModel
from agent_cli.stores import BoardLocation, open_stores

pytest.importorskip("psycopg")


def restart_of(pg_cluster):
    if pg_cluster.restart is None:
        pytest.skip("the server was given (AGENT_CLI_TEST_PG_URL): the tests cannot restart it")
    return pg_cluster.restart


def events_of(url: str, workdir: Path) -> list[dict]:
    stores = open_stores(workdir, BoardLocation("postgresql", url, "default"))
    try:
        return stores.board.events()
    finally:
        stores.close()


def once_each(events: list[dict], action: str) -> dict[int, int]:
    """task id -> how many `action` events it has."""
    counts: dict[int, int] = {}
    for e in events:
        if e["action"] == action:
            counts[e["task_id"]] = counts.get(e["task_id"], 0) + 1
    return counts


def holding_model(reached: threading.Event, go: threading.Event) -> ScriptedModel:
    """alice completes every task she is given; the first only once the test says go."""

    def first(request):
        reached.set()
        assert go.wait(WAIT), "the test never let alice go on"
        return complete_claimed("first done")(request)

    return ScriptedModel({"alice": [first, complete_claimed("second done")]})


def test_a_restart_while_alice_is_idle_and_while_she_holds_a_task_loses_nothing(
        workdir: Path, pg_cluster, pg_database: str) -> None:
    restart = restart_of(pg_cluster)
    reached, go = threading.Event(), threading.Event()
    rt = make_runtime(workdir, holding_model(reached, go), board=pg_database,
                      check_interval_s=60.0, watched_interval_s=60.0)
    rec = Recorder(rt)
    try:
        rt.team.spawn("alice", "helper")
        assert rt.team.wait_quiet(WAIT), "alice never went idle"
        restart()  # idle: only the LISTEN connection and the renewer's are cut
        assert agent(workdir.parent, "tasks", "add", "first", "--board",
                     pg_database).returncode == 0
        assert reached.wait(WAIT), "after the restart a new task did not wake alice"
        restart()  # alice holds #1 and her model is still thinking
        go.set()
        rec.wait_event("TaskEvent", action="completed", task_id=1)
        assert agent(workdir.parent, "tasks", "add", "second", "--board",
                     pg_database).returncode == 0
        rec.wait_event("TaskEvent", action="completed", task_id=2)
        assert rt.team.wait_quiet(WAIT)
    finally:
        rt.close(WAIT)
    events = events_of(pg_database, workdir)
    assert once_each(events, "claimed") == {1: 1, 2: 1}  # never taken twice
    assert once_each(events, "completed") == {1: 1, 2: 1}
    assert not [e for e in rec.of("Notice") if e.level == "warning"], rec.of("Notice")


def terminate_others(url: str) -> int:
    """pg_terminate_backend on every other connection to this database; how many."""
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()").fetchall()
    return len(rows)


def lease_until(url: str, workdir: Path, task_id: int) -> str | None:
    stores = open_stores(workdir, BoardLocation("postgresql", url, "default"))
    try:
        return stores.board.get(task_id).lease_expires_at
    finally:
        stores.close()


def test_connections_terminated_under_the_lease_renewer_keep_the_task_alices(
        workdir: Path, pg_database: str) -> None:
    reached, go, renewed = threading.Event(), threading.Event(), threading.Event()
    rt = make_runtime(workdir, holding_model(reached, go), board=pg_database, lease_s=6.0)
    rec = Recorder(rt)
    real_renew = rt.board.renew

    def renew(owners, lease_s=None):
        done = real_renew(owners, lease_s)
        if done:
            renewed.set()
        return done

    rt.board.renew = renew  # the renewer's board: each successful renewal is seen
    try:
        rt.board.create("first")
        rt.team.spawn("alice", "helper")
        assert reached.wait(WAIT), "alice never started on #1"
        before = lease_until(pg_database, workdir, 1)
        assert terminate_others(pg_database) >= 1
        renewed.clear()
        assert renewed.wait(WAIT), "the lease was not renewed after the connections were cut"
        assert lease_until(pg_database, workdir, 1) > before
        go.set()
        rec.wait_event("TaskEvent", action="completed", task_id=1)
    finally:
        go.set()
        rt.close(WAIT)
    events = events_of(pg_database, workdir)
    assert once_each(events, "claimed") == {1: 1} and once_each(events, "completed") == {1: 1}
    assert not [e for e in events if e["action"] in ("expired", "released")]
    assert not [e for e in rec.of("Notice") if e.level == "warning"], rec.of("Notice")


def test_a_server_down_at_start_is_one_line_and_nothing_is_written(tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:  # a port nobody listens on once closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"postgresql://ann:s3cret@127.0.0.1:{port}/team"
    for argv in (("tasks", "add", "x"), ("tasks", "list"), ("team",), ("inbox", "lead"),
                 ("watch", "--once"), ("teammate", "zed", "--model", "demo"),
                 ("--model", "demo", "-p", "hi", "--wait")):
        here = tmp_path / argv[0].strip("-")
        here.mkdir(exist_ok=True)
        proc = agent(here, *argv, "--board", url) if argv[0] != "--model" else \
            agent(here, "--board", url, *argv)
        assert proc.returncode == 5, (argv, proc.stderr)
        assert proc.stdout == "" and proc.stderr.count("\n") == 1, (argv, proc.stderr)
        assert f"postgresql://ann:***@127.0.0.1:{port}/team" in proc.stderr
        assert "s3cret" not in proc.stderr
        assert list(here.iterdir()) == [], argv


def test_a_schema_from_a_newer_agent_cli_is_one_line_and_left_alone(
        tmp_path: Path, pg_database: str) -> None:
    assert agent(tmp_path, "tasks", "add", "kept", "--board", pg_database).returncode == 0
    with psycopg.connect(pg_database, autocommit=True) as conn:
        conn.execute("INSERT INTO agent_cli_default.schema_version (component, version) "
                     "VALUES ('board', 999)")
    for argv in (("tasks", "add", "lost"), ("tasks", "list"), ("team",)):
        proc = agent(tmp_path, *argv, "--board", pg_database)
        assert proc.returncode == 5 and proc.stderr.count("\n") == 1, proc.stderr
        assert "board schema is version 999" in proc.stderr and "upgrade" in proc.stderr
    with psycopg.connect(pg_database, autocommit=True) as conn:
        subjects = conn.execute("SELECT subject FROM agent_cli_default.board_task").fetchall()
    assert subjects == [("kept",)]
