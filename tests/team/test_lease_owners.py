"""Leases and the processes behind them: a live teammate keeps its task through a long model
call (its renewer extends the lease), an owner whose process has ended loses its leases at
once, and `agent-cli team` / `tasks list` / `tasks doctor` say so."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
import threading
from pathlib import Path

from rich.console import Console
from support.team import WAIT, Call, Recorder, Reply, claimed_in, make_runtime

from agent_cli import cli as cli_mod
from agent_cli.board.leases import parse_ms
from agent_cli.board.store import TaskBoard
from agent_cli.models.scripted import ScriptedModel
from agent_cli.team.roster import Roster, this_host
from agent_cli.ui.startup import stale_tasks


def run(workdir: Path, *argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = cli_mod.main(["-C", str(workdir), *argv])
    return code, out.getvalue()


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_working_teammate_keeps_its_task_past_the_lease_while_its_thread_lives(
    workdir, cleanup
):
    renewed = threading.Condition()
    count = {"n": 0}

    def slow_call(request):  # a model call (or retry backoff) longer than several leases
        with renewed:
            assert renewed.wait_for(lambda: count["n"] >= 4, WAIT), "not renewed enough"
        task_id, token = claimed_in(request)
        return Reply(tool_calls=[Call("complete_task", {
            "task_id": task_id, "claim_token": token, "result": "slow but done"})])

    model = ScriptedModel({"alice": [slow_call, Reply("done")]})
    rt = make_runtime(workdir, model, lease_s=0.75)  # renewed every 0.25 s
    cleanup(rt)
    real_renew = rt.board.renew

    def counting(owners, lease_s=None):
        out = real_renew(owners, lease_s)
        with renewed:
            count["n"] += bool(out)
            renewed.notify_all()
        return out

    rt.board.renew = counting
    rec = Recorder(rt)
    rt.board.create("long job")
    rt.team.spawn("alice", "worker")
    rec.wait_event("TaskEvent", action="completed", task_id=1)
    task = rt.board.get(1)
    assert task.status == "completed" and task.owner == "alice"
    claimed = [e for e in rt.board.events() if e["action"] == "claimed"]
    assert len(claimed) == 1
    assert not [e for e in rt.board.events() if e["action"] == "lease_expired"]
    done_ms = parse_ms(task.updated_at)
    assert done_ms - parse_ms(claimed[0]["time"]) > 750  # it outlived its first lease


def _gone_owner(workdir: Path) -> tuple[int, str]:
    pid = dead_pid()
    roster = Roster(workdir / ".team")
    roster.add("alice", "worker")
    roster.update("alice", pid=pid, host=this_host(), status="working", current_task=1)
    board = TaskBoard(workdir / ".tasks", lease_s=600)
    board.create("held by a dead session")
    token = board.claim_next("alice").task.claim_token
    return pid, token


def test_an_owner_whose_process_ended_is_shown_gone_and_loses_its_lease_at_once(workdir):
    pid, token = _gone_owner(workdir)
    code, out = run(workdir, "team")
    assert code == 0
    assert f"gone (process {pid} ended)" in out and "working" not in out
    code, out = run(workdir, "tasks", "list")
    assert code == 0
    assert (f"lease expired: #1 held by a dead session: alice's lease expired "
            f"(process {pid} ended); pending again") in out
    assert "[ ]  #1" in out
    [expired] = [e for e in TaskBoard(workdir / ".tasks").events()
                 if e["action"] == "lease_expired"]
    assert expired["details"]["token"] == token
    assert expired["details"]["reason"] == f"process {pid} ended"
    code, out = run(workdir, "tasks", "complete", "1", "--as", "alice", "--token", token)
    assert code == 4 and "lease expired" in out


def test_doctor_lists_the_leases_it_took_back(workdir):
    pid, _ = _gone_owner(workdir)
    code, out = run(workdir, "tasks", "doctor")
    assert code == 0
    assert f"lease expired: #1 held by a dead session: alice's lease expired (process {pid}" in out
    code, out = run(workdir, "tasks", "doctor")
    assert "lease expired" not in out  # once


def test_an_owner_whose_process_lives_keeps_its_lease(workdir):
    live = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                            stdin=subprocess.PIPE)
    try:
        roster = Roster(workdir / ".team")
        roster.add("bob", "worker")
        roster.update("bob", pid=live.pid, host=this_host(), status="working")
        board = TaskBoard(workdir / ".tasks")
        board.create("held by a live session")
        board.claim_next("bob")
        code, out = run(workdir, "tasks", "list")
        assert "lease expired" not in out and "bob" in out
        assert run(workdir, "team")[1].count("working") == 1
    finally:
        live.stdin.close()
        live.wait(WAIT)


def test_an_owner_on_another_host_is_never_presumed_dead(workdir):
    roster = Roster(workdir / ".team")
    roster.add("carol", "worker")
    roster.update("carol", pid=dead_pid(), host="elsewhere.example", status="working")
    board = TaskBoard(workdir / ".tasks")
    board.create("remote")
    board.claim_next("carol")
    code, out = run(workdir, "tasks", "doctor")
    assert code == 0 and "lease expired" not in out
    assert "#1 held by carol (on elsewhere.example); lease until" in out
    assert TaskBoard(workdir / ".tasks").get(1).status == "in_progress"


def test_a_command_line_claim_takes_its_lease_from_the_flag_or_the_environment(
    workdir, monkeypatch
):
    TaskBoard(workdir / ".tasks").create("a")
    TaskBoard(workdir / ".tasks").create("b")
    assert run(workdir, "tasks", "claim", "1", "--as", "dan", "--lease", "90")[0] == 0
    monkeypatch.setenv("AGENT_CLI_LEASE_S", "30")
    assert run(workdir, "tasks", "claim", "2", "--as", "eve")[0] == 0
    board = TaskBoard(workdir / ".tasks")
    for tid, want in ((1, 90_000), (2, 30_000)):
        t = board.get(tid)
        assert parse_ms(t.lease_expires_at) - parse_ms(t.claimed_at) == want
    code, out = run(workdir, "tasks", "claim", "--as", "x", "--lease", "soon")
    assert code == 2 and "not a number of seconds" in out
    monkeypatch.setenv("AGENT_CLI_LEASE_S", "-1")
    code, out = run(workdir, "tasks", "claim", "--as", "x")
    assert code == 2 and "AGENT_CLI_LEASE_S" in out


def test_slash_team_shows_a_member_whose_process_ended_as_gone(workdir):

    from agent_cli.ui.tables import team_table

    pid = dead_pid()
    roster = Roster(workdir / ".team")
    roster.add("alice", "worker")
    member = roster.update("alice", pid=pid, host=this_host(), status="working")
    out = io.StringIO()
    Console(file=out, width=120, color_system=None).print(team_table(None, [member]))
    assert f"gone (process {pid} ended)" in out.getvalue()


def test_slash_team_shows_where_each_member_runs(workdir, monkeypatch):
    """/team names each member's host (a teammate of another machine on a database board)
    and this machine's for the lead."""
    from agent_cli.ui.tables import team_table

    roster = Roster(workdir / ".team")
    roster.add("bob", "worker")
    bob = roster.update("bob", host="host-b", status="idle")
    monkeypatch.setenv("AGENT_CLI_HOST", "host-a")
    out = io.StringIO()
    Console(file=out, width=120, color_system=None).print(
        team_table(("idle", 0), [bob], gone=lambda m: None))
    cells = [[c for c in line.replace("┃", " ").replace("│", " ").split()]
             for line in out.getvalue().splitlines()[1:]]
    rows = {c[0]: c for c in cells if c and c[0].isalpha()}
    assert rows["name"][:4] == ["name", "role", "state", "host"]
    assert rows["lead"][3] == "host-a" and rows["bob"][3] == "host-b"


def test_a_teammate_completing_after_its_lease_ran_out_is_told_lease_expired(workdir, cleanup):
    import time

    from support.agent import results_of

    def late(request):  # the machine slept past the lease before the model answered
        rt.board.leases._clock = lambda: time.time() + 3600
        task_id, token = claimed_in(request)
        return Reply(tool_calls=[Call("complete_task", {
            "task_id": task_id, "claim_token": token, "result": "late"})])

    model = ScriptedModel({"alice": [late, Reply("I will look again.")]})
    rt = make_runtime(workdir, model, lease_s=600)
    cleanup(rt)
    rec = Recorder(rt)
    rt.board.create("slow")
    rt.team.spawn("alice", "worker")
    rec.wait_event("TurnFinished", agent="alice")
    [result] = results_of(model.requests_for("alice")[1].messages[-1])
    assert result.is_error and "lease expired" in str(result.content)
    assert not [e for e in rt.board.events() if e["action"] == "completed"]


def test_release_offer_skips_a_teammate_another_live_process_runs(workdir):
    rt = make_runtime(workdir, ScriptedModel({}))
    task = rt.board.create("held elsewhere")
    rt.board.claim(task.id, "alice")
    rt.roster.add("alice", "tester")
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        rt.roster.update("alice", pid=other.pid, host=this_host())
        assert stale_tasks(rt) == []  # alive in another process: not offered for release
    finally:
        other.kill()
        other.wait()
    # that process is gone: its lease expired by itself, nothing left to offer
    assert stale_tasks(rt) == []
    assert rt.board.get(task.id).status == "pending"
    assert [e["action"] for e in rt.board.events()][-1] == "lease_expired"
