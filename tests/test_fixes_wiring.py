"""Wiring of the review fixes into the team manager and the REPL's helpers: shutdown_all stops
a teammate stuck in a shell command, the start-up release offer skips teammates another live
process runs, and `!CMD` runs through the shell tool's runner."""

from __future__ import annotations

import os
import select
import subprocess
import sys

from rich.console import Console
from support.team import WAIT, Call, Recorder, Reply, make_runtime

from agent_cli.models.scripted import ScriptedModel
from agent_cli.team.roster import this_host
from agent_cli.ui.shell import run_user_shell
from agent_cli.ui.startup import stale_tasks


def test_shutdown_all_interrupts_a_teammate_stuck_in_a_shell_command(workdir):
    model = ScriptedModel({"alice": [Reply(tool_calls=[Call("shell", {"command": "sleep 60"})])]})
    rt = make_runtime(workdir, model, allow=["Bash(sleep 60)"])
    rec = Recorder(rt)
    rt.team.spawn("alice", "tester", prompt="wait a minute")
    rec.wait_event("ToolStarted", agent="alice", tool="shell")
    busy = rt.team.shutdown_all(0.3)
    assert busy == ["alice"]  # still busy at the deadline ...
    mate = rt.team.teammate("alice")
    mate.thread.join(WAIT)
    assert not mate.thread.is_alive()  # ... then interrupted: the sleep was killed
    finished = rec.wait_event("ToolFinished", agent="alice", tool="shell")
    assert not finished.ok


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


def render(renderable) -> str:
    console = Console(file=None, width=100, record=True, color_system=None)
    with console.capture() as cap:
        console.print(renderable)
    return cap.get()


def test_user_shell_shows_output_and_exit_code(workdir):
    shown = render(run_user_shell("echo hello; echo oops >&2; exit 3", workdir))
    assert "$ echo hello" in shown and "hello" in shown and "oops" in shown
    assert "exit 3" in shown


def test_user_shell_timeout_kills_background_jobs_too(workdir):
    marker = workdir / "pid"
    shown = render(run_user_shell(f"sleep 60 & echo $! > {marker}; wait", workdir, timeout=0.5))
    assert "timed out" in shown
    pid = int(marker.read_text())
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return  # already gone and reaped
    try:  # a pidfd turns readable when the process has exited: no polling
        ready, _, _ = select.select([fd], [], [], WAIT)
    finally:
        os.close(fd)
    assert ready, "the background sleep outlived the timeout"


def test_an_explicit_claim_is_refused_while_the_team_shuts_down(workdir):
    from agent_cli.tools.base import ToolContext
    from agent_cli.tools.team_tools import teammate_tools

    rt = make_runtime(workdir, ScriptedModel({}))
    rt.board.create("ready")
    claim = next(t for t in teammate_tools() if t.name == "claim_task")
    ctx = ToolContext(agent="alice", workdir=rt.workdir, runtime=rt)
    assert rt.team.claims.close(WAIT)
    out = claim.run(claim.parse({}), ctx)
    assert out.is_error and "shutting down" in out.content
    assert rt.board.get(1).status == "pending"  # nothing was claimed
    rt.team.claims.reopen()
    out = claim.run(claim.parse({}), ctx)
    assert not out.is_error and rt.board.get(1).owner == "alice"
