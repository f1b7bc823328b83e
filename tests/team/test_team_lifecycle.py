"""Teammates find their own work: concurrent claims, dependencies, shutdown before new work,
crashes, idle notifications, and wake-ups from other processes."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest
from support.team import (
    EXPIRY,
    TOKEN_RE,
    WAIT,
    Call,
    Recorder,
    Reply,
    claimed_in,
    complete_claimed,
    make_runtime,
    paused,
    runtime_with_clock,
)

from agent_cli import errors
from agent_cli.errors import Refused
from agent_cli.models.scripted import ScriptedModel


def test_abc_two_teammates_claim_a_and_b_concurrently_then_one_claims_c(workdir, cleanup):
    both_working = threading.Barrier(2, timeout=WAIT)

    def worker(request):
        last = request.messages[-1].text()
        match = TOKEN_RE.search(last)
        if match is None:
            return Reply(text="finished")
        task_id, token = int(match.group(1)), match.group(2)
        if task_id in (1, 2):
            both_working.wait()  # A and B are held at the same time
        return Reply(tool_calls=[Call("complete_task", {
            "task_id": task_id, "claim_token": token, "result": f"did #{task_id}"})])

    model = ScriptedModel({"*": [worker] * 3})  # one request per task: complete ends a turn
    rt = make_runtime(workdir, model)
    cleanup(rt)
    rec = Recorder(rt)
    a = rt.board.create("A")
    b = rt.board.create("B")
    c = rt.board.create("C", blocked_by=[a.id, b.id])
    rt.team.spawn("alice", "worker")
    rt.team.spawn("bob", "worker")

    rec.wait_event("TaskEvent", action="completed", task_id=c.id)
    assert rt.team.wait_quiet(WAIT)
    model.assert_used_up()

    events = rt.board.events()
    claims = [e for e in events if e["action"] == "claimed"]
    completions = [e for e in events if e["action"] == "completed"]
    assert sorted(e["task_id"] for e in claims) == [1, 2, 3]  # each claimed exactly once
    assert sorted(e["task_id"] for e in completions) == [1, 2, 3]
    owner = {e["task_id"]: e["actor"] for e in claims}
    assert {owner[a.id], owner[b.id]} == {"alice", "bob"}
    pos = {(e["action"], e["task_id"]): i for i, e in enumerate(events)}
    assert pos[("claimed", c.id)] > pos[("completed", a.id)]
    assert pos[("claimed", c.id)] > pos[("completed", b.id)]
    assert all(t.status == "completed" for t in rt.board.snapshot().tasks)
    # the lead heard about every completion, labelled with the sender
    block = rt.team.lead_inbox_block()
    assert block.count('type="result"') == 3
    assert f'from="{owner[c.id]}" type="result">task #3 (C) completed' in block


def test_shutdown_wins_over_a_ready_task(workdir, cleanup):
    in_turn, go_on = threading.Event(), threading.Event()

    def busy(request):
        in_turn.set()
        assert go_on.wait(WAIT)
        return Reply(text="hello there")

    model = ScriptedModel({"alice": [busy]})
    rt = make_runtime(workdir, model)
    cleanup(rt)
    rec = Recorder(rt)
    rt.team.spawn("alice", "worker", prompt="say hello")
    assert in_turn.wait(WAIT)
    task = rt.board.create("ready work")
    req = rt.team.request_shutdown("alice")
    go_on.set()

    rec.status("alice", "shutdown")
    rt.team.teammate("alice").thread.join(WAIT)
    assert rt.board.get(task.id).status == "pending"
    assert rt.board.get(task.id).owner is None
    assert len(model.requests_for("alice")) == 1  # the model never saw the task
    seen = "".join(m.model_dump_json() for m in model.requests_for("alice")[0].messages)
    assert "<auto-claimed-task" not in seen and "ready work" not in seen
    assert rt.protocols.get(req.id).status == "approved"
    assert rt.roster.get("alice").status == "shutdown"
    block = rt.team.lead_inbox_block()
    assert f'type="shutdown_response" request_id="{req.id}" approve="true"' in block
    assert rt.team.running() == []


def test_shutdown_mid_turn_stops_before_the_next_model_call_and_releases(workdir, cleanup):
    in_turn, go_on = threading.Event(), threading.Event()

    def working(request):
        claimed_in(request)
        in_turn.set()
        assert go_on.wait(WAIT)
        return Reply(tool_calls=[Call("list_tasks", {})])  # one more tool call, then stop

    model = ScriptedModel({"alice": [working]})
    rt = make_runtime(workdir, model)
    cleanup(rt)
    rec = Recorder(rt)
    task = rt.board.create("long job")
    rt.team.spawn("alice", "worker")
    assert in_turn.wait(WAIT)
    assert rt.board.get(task.id).owner == "alice"
    rt.team.request_shutdown("alice")
    go_on.set()

    rec.status("alice", "shutdown")
    assert rec.of("ToolFinished", agent="alice", tool="list_tasks")  # the current call ran
    assert len(model.requests_for("alice")) == 1  # no model call after the request
    released = rt.board.get(task.id)
    assert (released.status, released.owner) == ("pending", None)
    assert rec.of("TaskEvent", agent="alice", action="released", task_id=task.id)


def test_crashed_teammate_releases_its_task_and_tells_the_lead(workdir, cleanup):
    model = ScriptedModel({
        "alice": [RuntimeError("boom")],
        "bob": [complete_claimed("bob did it")],
    })
    rt = make_runtime(workdir, model)
    cleanup(rt)
    rec = Recorder(rt)
    task = rt.board.create("fragile")
    rt.team.spawn("alice", "worker")
    rec.status("alice", "failed")
    assert rt.board.get(task.id).status == "pending"
    assert rt.roster.get("alice").status == "failed"
    block = rt.team.lead_inbox_block()
    assert 'from="alice" type="error"' in block and "boom" in block
    assert "task #1 released to pending" in block

    rt.team.spawn("bob", "worker")  # the team carries on
    rec.wait_event("TaskEvent", agent="bob", action="completed", task_id=task.id)
    assert rt.board.get(task.id).owner == "bob"
    assert rt.team.wait_quiet(WAIT)
    model.assert_used_up()


def test_failed_teammate_can_be_respawned_and_a_running_one_cannot(workdir, cleanup):
    from agent_cli.errors import InvalidName, Overloaded

    # overloaded on every one of its 8 attempts: failed; respawned, it resumes its transcript
    model = ScriptedModel({"alice": [*[Overloaded("busy")] * 8, Reply(text="back again")]})
    rt = make_runtime(workdir, model)
    cleanup(rt)
    rec = Recorder(rt)
    rt.team.spawn("alice", "worker", prompt="first")
    rec.status("alice", "failed")
    rt.team.spawn("alice", "worker", prompt="second")
    rec.wait_event("TurnFinished", agent="alice", stop_reason="end_turn")
    with pytest.raises(Refused, match="already running"):
        rt.team.spawn("alice", "worker")
    with pytest.raises(Refused, match="lead"):
        rt.team.spawn("lead", "boss")
    with pytest.raises(InvalidName):
        rt.team.spawn("../x", "worker")
    # the restarted agent continued from its transcript: the first prompt is still there
    second = model.requests_for("alice")[-1].model_dump_json()
    assert "first" in second and "second" in second


def test_idle_timeout_notifies_once_and_stops_watching_the_board(workdir, cleanup):
    model = ScriptedModel({"alice": [Reply(text="looking"), complete_claimed()]})
    rt = make_runtime(workdir, model, idle_timeout_s=0.2)
    cleanup(rt)
    rec = Recorder(rt)
    rt.team.spawn("alice", "worker")
    rec.wait_event("MessageEvent", agent="alice", msg_type="idle_notification")
    task = rt.board.create("late work")
    assert rt.team.wait_quiet(WAIT)  # alice only watches her inbox now
    assert rt.board.get(task.id).status == "pending"
    block = rt.team.lead_inbox_block()
    assert block.count("idle_notification") == 1
    assert "no claimable task" in block or "no tasks" in block

    rt.mail.send("lead", "alice", "there is new work")  # a message wakes her
    rec.wait_event("TaskEvent", agent="alice", action="completed", task_id=task.id)
    assert rt.team.wait_quiet(WAIT)
    model.assert_used_up()


def _cli(workdir, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agent_cli", "-C", str(workdir), *args],
                          capture_output=True, text=True, timeout=60)


def test_changes_from_other_processes_wake_an_idle_teammate(workdir, cleanup):
    def reply_to_message(request):
        assert '<message from="bob" type="message">hi from a shell</message>' in (
            request.messages[-1].text())
        return Reply(text="got it")

    model = ScriptedModel({"alice": [reply_to_message, complete_claimed()]})
    rt = make_runtime(workdir, model)
    cleanup(rt)
    rec = Recorder(rt)
    rt.roster.add("bob", "helper")
    rt.team.spawn("alice", "worker")
    rec.status("alice", "idle")

    sent = _cli(workdir, "send", "--from", "bob", "--to", "alice", "hi from a shell")
    assert sent.returncode == 0, sent.stderr
    rec.wait_event("TurnFinished", agent="alice", stop_reason="end_turn")

    added = _cli(workdir, "tasks", "add", "from another terminal")
    assert added.returncode == 0, added.stderr
    rec.wait_event("TaskEvent", agent="alice", action="completed")
    assert rt.team.wait_quiet(WAIT)
    model.assert_used_up()


def test_a_shutdown_request_answered_too_late_is_reported_and_can_be_asked_again(
    workdir, cleanup
):
    reached, go = threading.Event(), threading.Event()
    model = ScriptedModel({"alice": [
        paused(reached, go, Reply(tool_calls=[Call("list_tasks", {})])),
        Reply(text="listed"),
    ]})
    rt, clock = runtime_with_clock(workdir, model)
    cleanup(rt)
    rec = Recorder(rt)
    rt.team.spawn("alice", "coder", prompt="look at the board")
    assert reached.wait(WAIT)

    old = rt.team.request_shutdown("alice")  # arrives while alice is busy
    clock.now += EXPIRY  # ... and she only gets to it after it expired
    go.set()
    rec.wait_event("TurnFinished", agent="alice")
    rec.status("alice", "idle")

    # She is still running, and both the user and the lead are told why.
    assert rt.team.teammate("alice").alive()
    assert rt.protocols.get(old.id).status == "pending"  # unchanged: it expired
    warnings = [e.text for e in rec.of("Notice", agent="alice", level="warning")]
    assert any("expired before it could answer" in w for w in warnings), warnings
    told = [m for m in rt.mail.peek("lead") if m.sender == "alice"]
    assert len(told) == 1 and told[0].type == "message"
    assert "expired" in told[0].content and "request_shutdown again" in told[0].content
    assert not rec.of("StatusEvent", agent="alice", status="shutdown")

    # Asking again sends a fresh request (the expired one is not reused) and it works.
    fresh = rt.team.request_shutdown("alice")
    assert fresh.id != old.id
    rec.status("alice", "shutdown")
    assert rt.protocols.get(fresh.id).status == "approved"
    assert not rt.team.teammate("alice").alive()
    model.assert_used_up()


def test_request_shutdown_reuses_a_live_request_but_not_an_expired_one(workdir, cleanup):
    reached, go = threading.Event(), threading.Event()
    model = ScriptedModel({"alice": [
        paused(reached, go, Reply(tool_calls=[Call("list_tasks", {})])),
    ]})
    rt, clock = runtime_with_clock(workdir, model)
    cleanup(rt)
    rec = Recorder(rt)
    rt.team.spawn("alice", "coder", prompt="look at the board")
    assert reached.wait(WAIT)

    first = rt.team.request_shutdown("alice")
    assert rt.team.request_shutdown("alice").id == first.id  # still live: reused, not resent
    clock.now += EXPIRY
    fresh = rt.team.request_shutdown("alice")
    assert fresh.id != first.id
    requests = [m for m in rt.mail.peek("alice") if m.type == "shutdown_request"]
    assert [m.request_id for m in requests] == [first.id, fresh.id]
    go.set()

    # She meets both at once: the fresh one is accepted, so the expired one is moot.
    rec.status("alice", "shutdown")
    assert rt.protocols.get(fresh.id).status == "approved"
    to_lead = [m for m in rt.mail.peek("lead") if m.sender == "alice"]
    assert [m.type for m in to_lead] == ["shutdown_response"]
    assert to_lead[0].request_id == fresh.id
    model.assert_used_up()


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
