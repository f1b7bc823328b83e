"""Regression tests for review findings in the team layer: corrupt requests.json / config.json
must not kill or hide teammates, a lost plan keeps the gate closed, a respawn starts clean,
and the roster records which process runs a teammate."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
from support.team import WAIT, Call, FakeHuman, Recorder, Reply, make_runtime

from agent_cli import errors
from agent_cli.models.scripted import ScriptedModel
from agent_cli.team import plans
from agent_cli.team.roster import Roster, this_host
from agent_cli.tools.base import ToolContext
from agent_cli.tools.team_tools import send_message_tool

UNREADABLE = "cannot read .team/requests.json"


def _corrupt(path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{garbage")


def _reasons(rec: Recorder, agent: str) -> list[str]:
    return [e.reason for e in rec.of("StatusEvent", agent=agent)]


# ---- 1. a corrupt requests.json ------------------------------------------------------------


def test_unreadable_requests_json_leaves_an_idle_teammate_idle_without_claiming(workdir, cleanup):
    rt = make_runtime(workdir, ScriptedModel({"alice": [Reply("on it")]}))
    cleanup(rt)
    rec = Recorder(rt)
    rt.team.spawn("alice", "coder")
    rec.status("alice", "idle")
    _corrupt(workdir / ".team" / "requests.json")

    task = rt.board.create("ready work")  # wakes alice: her claim path reads the plan state
    rec.wait_for(lambda: any(r.startswith(UNREADABLE) for r in _reasons(rec, "alice")),
                 what="alice idle because requests.json is unreadable")
    assert rt.team.wait_quiet(WAIT)
    assert rt.board.get(task.id).status == "pending"  # fail closed: nothing claimed
    assert rec.of("StatusEvent", agent="alice", status="failed") == []
    assert rt.team.teammate("alice").alive()
    member = rt.roster.get("alice")
    assert member.status == "idle" and member.idle_reason.startswith(UNREADABLE)

    (workdir / ".team" / "requests.json").unlink()  # the user repairs it
    rt.board.create("more work")
    rec.wait_event("TaskEvent", agent="alice", action="claimed", task_id=task.id)


def test_a_plan_answer_read_from_a_corrupt_store_is_refused_without_failing(workdir, cleanup):
    model = ScriptedModel({"alice": [
        Reply(tool_calls=[Call("submit_plan", {"plan": "1. edit"})]),
        Reply(tool_calls=[Call("idle", {})]),
    ]})
    rt = make_runtime(workdir, model)
    cleanup(rt)
    rec = Recorder(rt)
    rt.team.spawn("alice", "coder", prompt="plan first", require_plan=True)
    rec.status("alice", "waiting_plan")
    req = rt.protocols.latest_plan("alice")
    _corrupt(workdir / ".team" / "requests.json")

    rt.mail.send("lead", "alice", "plan approved", "plan_approval_response",
                 request_id=req.id, approve=True)
    rec.wait_for(lambda: any(UNREADABLE in e.text for e in rec.of("Notice", agent="alice")),
                 what="warning about the unreadable store")
    rec.wait_for(lambda: any(r.startswith(UNREADABLE) for r in _reasons(rec, "alice")),
                 what="alice idle")
    assert rec.of("StatusEvent", agent="alice", status="failed") == []
    assert rt.team.teammate("alice").alive()
    # repaired before closing: Team.request_shutdown (manager.py) still raises CorruptFile
    (workdir / ".team" / "requests.json").unlink()


def test_a_plan_the_store_lost_keeps_the_gate_and_claims_closed(workdir, cleanup):
    write = Call("write_file", {"path": "out.txt", "content": "x"})
    model = ScriptedModel({"alice": [
        Reply(tool_calls=[Call("submit_plan", {"plan": "1. write out.txt"})]),
        Reply(tool_calls=[Call("idle", {})]),
        Reply(tool_calls=[write]),  # after the store lost her pending plan
        Reply(tool_calls=[Call("idle", {})]),
    ]})
    rt = make_runtime(workdir, model)
    cleanup(rt)
    rec = Recorder(rt)
    human = FakeHuman(rt, lambda req: "allow_once")  # would allow anything it is asked
    rt.team.spawn("alice", "coder", prompt="plan, then write")  # no require_plan
    rec.status("alice", "waiting_plan")
    _corrupt(workdir / ".team" / "requests.json")
    rt.protocols.create("shutdown", "lead", "bob")  # sets the corrupt file aside: store empty
    assert rt.protocols.latest_plan("alice") is None
    task = rt.board.create("ready work")

    rt.mail.send("lead", "alice", "carry on")
    rec.wait_for(lambda: len(rec.of("TurnFinished", agent="alice")) == 2, what="second turn")
    assert rt.team.wait_quiet(WAIT)
    human.close()

    [result] = rec.of("ToolFinished", agent="alice", tool="write_file")
    assert not result.ok and "no longer on record" in result.outcome
    assert human.asked == [] and not (workdir / "out.txt").exists()
    assert rt.board.get(task.id).status == "pending"
    assert "plan request lost: submit_plan again" in _reasons(rec, "alice")


def test_a_remembered_approved_plan_does_not_block(workdir):
    memory = plans.PlanMemory()
    rt_dir = workdir / ".team"
    from agent_cli.team.protocol import ProtocolStore

    store = ProtocolStore(rt_dir)
    req = store.create("plan_approval", "alice", "lead", "p")
    memory.note(store.resolve(req.id, "plan_approval", "lead", "alice", True))
    _corrupt(rt_dir / "requests.json")
    store.create("shutdown", "lead", "bob")  # set aside: the store forgot the plan
    assert plans.plan_block(store, "alice", True, known=memory.known) is None
    assert memory.lost_block(store, "alice") is None
    pending = store.create("plan_approval", "alice", "lead", "newer plan")
    assert plans.plan_block(store, "alice", False, known=memory.known) == plans.PENDING
    assert memory.state(store, "alice") == (pending, False)  # the store's newer plan decides


# ---- 2. a corrupt config.json ----------------------------------------------------------------


def test_live_teammates_are_registered_again_after_the_roster_is_set_aside(workdir, cleanup):
    # the claimant never completes: reminded twice, then reported; it keeps the task
    rt = make_runtime(workdir, ScriptedModel({"*": [Reply("on it")] * 3}))
    cleanup(rt)
    rec = Recorder(rt)
    rt.team.spawn("alice", "coder", model="demo")
    rt.team.spawn("bob", "tester", require_plan=False)
    rec.status("alice", "idle")
    rec.status("bob", "idle")
    (workdir / ".team" / "config.json").write_text("\x00\x01 not json")

    task = rt.board.create("A")  # the claimant's status write meets the corrupt roster
    claimed = rec.wait_event("TaskEvent", action="claimed", task_id=task.id)
    assert rt.team.wait_quiet(WAIT)

    members = {m.name: m for m in rt.roster.members()}
    assert set(members) == {"alice", "bob"}
    assert members["alice"].role == "coder" and members["alice"].model == "demo"
    assert members[claimed.agent].current_task == task.id
    assert all(m.pid == os.getpid() for m in members.values())
    assert list((workdir / ".team").glob("config.json.corrupt-*"))  # kept, not deleted


def test_send_message_reaches_a_running_teammate_the_roster_lost(workdir, cleanup):
    rt = make_runtime(workdir, ScriptedModel({"*": []}))
    cleanup(rt)
    rec = Recorder(rt)
    rt.team.spawn("alice", "coder")
    rt.team.spawn("bob", "tester")
    rec.status("alice", "idle")
    rec.status("bob", "idle")
    rt.team.status.flush(WAIT)
    (workdir / ".team" / "config.json").write_text("not json")
    assert rt.roster.get("bob") is None

    tool = send_message_tool()
    out = tool.run(tool.parse({"to": "bob", "content": "hi"}),
                   ToolContext(agent="alice", workdir=workdir, runtime=rt))
    assert not out.is_error and out.content == "sent to bob"
    missing = tool.run(tool.parse({"to": "carol", "content": "hi"}),
                       ToolContext(agent="alice", workdir=workdir, runtime=rt))
    assert missing.is_error and "no teammate carol" in missing.content
    rt.broker.detach_ui()


# ---- 4. a respawn after a failure with a shutdown request pending ---------------------------


def test_a_respawned_teammate_is_not_stopped_by_the_old_shutdown_request(workdir, cleanup):
    import threading

    go = threading.Event()

    def slow_fail(request):
        go.wait(WAIT)
        raise errors.BadRequest("prompt is too long")  # not retried: fails at once

    model = ScriptedModel({"alice": [slow_fail, Reply("hello again")]})
    rt = make_runtime(workdir, model)
    cleanup(rt)
    rec = Recorder(rt)
    rt.team.spawn("alice", "coder", prompt="start")
    rec.status("alice", "working")
    req = rt.team.request_shutdown("alice")  # arrives while the model call runs
    go.set()
    rec.status("alice", "failed")
    rt.team.teammate("alice").thread.join(WAIT)

    closed = rt.protocols.get(req.id)
    assert closed.status == "approved" and "already down" in closed.resolution
    assert rt.mail.fetch("alice").messages == []  # the inbox is acknowledged past it

    before = len(rec.of("StatusEvent", agent="alice"))
    rt.team.spawn("alice", "coder", prompt="please continue")
    rec.wait_event("TurnFinished", agent="alice", stop_reason="end_turn")
    assert rt.team.wait_quiet(WAIT)
    after = [e.status for e in rec.of("StatusEvent", agent="alice")[before:]]
    assert "shutdown" not in after and rt.team.teammate("alice").alive()
    assert model.remaining() == {} or not any(model.remaining().values())


# ---- 7. which process runs a teammate ------------------------------------------------------


def test_the_roster_records_the_running_process_and_clears_it_on_shutdown(workdir, cleanup):
    rt = make_runtime(workdir, ScriptedModel({"*": []}))
    rec = Recorder(rt)
    rt.team.spawn("alice", "coder")
    rec.status("alice", "idle")
    rt.team.status.flush(WAIT)
    member = rt.roster.get("alice")
    assert (member.pid, member.host) == (os.getpid(), this_host())
    assert rt.roster.is_alive(member)

    assert rt.close(WAIT) == []
    member = rt.roster.get("alice")
    assert member.status == "shutdown" and (member.pid, member.host) == (None, None)
    assert not rt.roster.is_alive(member)


def test_is_alive_checks_the_process_and_the_host(workdir):
    roster = Roster(workdir / ".team")
    roster.add("alice", "coder")
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                             stdin=subprocess.PIPE)
    try:
        alive = roster.update("alice", pid=child.pid, host=this_host())
        assert roster.is_alive(alive)
        assert not roster.is_alive(alive.model_copy(update={"host": "elsewhere"}))
        with pytest.raises(errors.Refused, match=f"running in process {child.pid}"):
            roster.add_running("alice", "coder")
        assert roster.get("alice").pid == child.pid  # the refusal changed nothing
    finally:
        child.stdin.close()
        child.wait(WAIT)
    assert not roster.is_alive(roster.get("alice"))
    mine = roster.add_running("alice", "coder")
    assert mine.pid == os.getpid()
    assert not roster.is_alive(mine)  # our pid, but no teammate thread of ours runs it
    assert roster.add_running("alice", "coder").pid == os.getpid()  # ours to restart


CHILD = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from agent_cli.models.scripted import ScriptedModel
    from agent_cli.runtime import Runtime, RuntimeConfig
    model = ScriptedModel({"*": []})
    rt = Runtime.open(Path(sys.argv[1]), RuntimeConfig(model_factory=lambda a, s: model,
                                                       idle_timeout_s=0, check_interval_s=0.02))
    rt.team.spawn("alice", "coder")
    rt.team.status.flush(10)
    print("ready", flush=True)
    sys.stdin.read()
    print("busy:", rt.close(10), flush=True)
    """
)


def test_another_process_sees_a_teammate_alive_while_its_session_runs_it(workdir):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(workdir)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert child.stdout.readline().strip() == "ready"
        roster = Roster(workdir / ".team")
        member = roster.get("alice")
        assert member.pid == child.pid and roster.is_alive(member)
        with pytest.raises(errors.Refused, match="already running in process"):
            roster.add_running("alice", "coder")
    finally:
        child.stdin.close()
        out = child.stdout.read()
        child.wait(WAIT)
    assert "busy: []" in out
    member = Roster(workdir / ".team").get("alice")
    assert member.pid is None and not Roster(workdir / ".team").is_alive(member)
