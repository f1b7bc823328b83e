"""Team.shutdown_all closes claims for everyone before it sends any shutdown request: a task
released by one teammate on its way out is not re-claimed by another that is also stopping.
A teammate another process runs (`agent-cli teammate`) is asked like one of this process."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest
from support.team import WAIT, Call, Recorder, Reply, make_runtime

from agent_cli.errors import Refused
from agent_cli.models.scripted import ScriptedModel
from agent_cli.team.roster import this_host


def test_a_task_released_at_shutdown_is_not_reclaimed_by_a_stopping_teammate(workdir):
    # alice claims #1 and ends her turn holding it; bob finds nothing and waits on the board.
    # (the host reminds her twice, then tells the lead; she keeps the task)
    model = ScriptedModel({"alice": [Reply("holding #1 for now")] * 3, "bob": []})
    rt = make_runtime(workdir, model)
    rec = Recorder(rt)
    task = rt.board.create("hold me")
    rt.team.spawn("alice", "worker")
    rec.wait_event("TaskEvent", action="claimed", agent="alice")
    rt.team.spawn("bob", "worker")
    assert rt.team.wait_quiet(WAIT)

    # Hold bob's shutdown request back until alice has released #1: if claims were still
    # open, bob (woken by the board change) would claim it before his request arrives.
    released = threading.Event()
    rt.events.subscribe(
        lambda e: released.set() if getattr(e, "action", "") == "released" else None
    )
    send = rt.mail.send

    def slow_send(sender, to, content, type="message", **kw):
        if to == "bob" and type == "shutdown_request":
            assert released.wait(WAIT), "alice never released her task"
        return send(sender, to, content, type, **kw)

    rt.mail.send = slow_send
    assert rt.team.shutdown_all(WAIT) == []

    claims = [e for e in rt.board.events() if e["action"] == "claimed"]
    assert [(e["task_id"], e["actor"]) for e in claims] == [(task.id, "alice")]
    after = rt.board.get(task.id)
    assert (after.status, after.owner) == ("pending", None)
    assert {m.name: m.status for m in rt.roster.members()} == {
        "alice": "shutdown",
        "bob": "shutdown",
    }
    model.assert_used_up()


def test_a_teammate_spawned_after_shutdown_all_claims_again(workdir):
    model = ScriptedModel({"alice": [Reply("nothing to do")]})
    rt = make_runtime(workdir, model)
    rec = Recorder(rt)
    assert rt.team.shutdown_all(WAIT) == []  # closes claims (no teammates yet)
    rt.board.create("later work")
    rt.team.spawn("alice", "worker")
    rec.wait_event("TaskEvent", action="claimed", agent="alice")
    assert rt.team.wait_quiet(WAIT)
    assert rt.close(WAIT) == []


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


def test_an_explicit_claim_is_refused_while_the_team_shuts_down(workdir):
    from agent_cli.team.team_tools import teammate_tools
    from agent_cli.tools.base import ToolContext

    rt = make_runtime(workdir, ScriptedModel({}))
    rt.board.create("ready")
    claim = next(t for t in teammate_tools(rt.team) if t.name == "claim_task")
    ctx = ToolContext(agent="alice", workdir=rt.workdir)
    assert rt.team.claims.close(WAIT)
    out = claim.run(claim.parse({}), ctx)
    assert out.is_error and "shutting down" in out.content
    assert rt.board.get(1).status == "pending"  # nothing was claimed
    rt.team.claims.reopen()
    out = claim.run(claim.parse({}), ctx)
    assert not out.is_error and rt.board.get(1).owner == "alice"


def test_a_teammate_running_in_another_process_can_be_asked_to_shut_down(workdir, cleanup):
    rt = make_runtime(workdir, ScriptedModel({}))
    cleanup(rt)
    other = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                             stdin=subprocess.PIPE)
    try:
        rt.roster.add("bob", "worker")
        rt.roster.update("bob", pid=other.pid, host=this_host())
        req = rt.team.request_shutdown("bob")  # `agent-cli teammate bob` in that process
        (msg,) = rt.mail.peek("bob")
        assert (msg.type, msg.request_id, msg.sender) == ("shutdown_request", req.id, "lead")
        rt.roster.add("carol", "worker")
        rt.roster.update("carol", pid=4242, host="another-host")  # cannot be checked: asked
        rt.team.request_shutdown("carol")
    finally:
        other.stdin.close()
        other.wait(WAIT)
    with pytest.raises(Refused, match="bob is not running"):  # its process has ended
        rt.team.request_shutdown("bob")
    rt.roster.update("carol", status="shutdown")
    with pytest.raises(Refused, match="carol is not running"):
        rt.team.request_shutdown("carol")
