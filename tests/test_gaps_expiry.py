"""Protocol expiry seen by a user: a shutdown request or a plan that outlives its 5-minute
window is not silently dropped. The protocol store's clock is injected (no waiting)."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from support.team import WAIT, Call, Recorder, Reply, last_user_text, make_runtime

from agent_cli.errors import Refused
from agent_cli.models.base import ModelRequest
from agent_cli.models.scripted import ScriptedModel
from agent_cli.runtime import Runtime
from agent_cli.team import plans
from agent_cli.team.protocol import ProtocolStore

EXPIRY = timedelta(minutes=6)  # past the default 5-minute window


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def runtime_with_clock(workdir: Path, model: ScriptedModel) -> tuple[Runtime, Clock]:
    rt = make_runtime(workdir, model)
    clock = Clock()
    rt.protocols = ProtocolStore(rt.team_dir, clock=clock)
    return rt, clock


def paused(reached: threading.Event, go: threading.Event, reply: Reply):
    """A scripted entry that waits (as for a human's approval) until the test lets it go."""

    def entry(request: ModelRequest) -> Reply:
        reached.set()
        assert go.wait(WAIT), "the test never let the model go on"
        return reply

    return entry


@pytest.fixture
def cleanup():
    runtimes: list[Runtime] = []
    yield runtimes.append
    for rt in runtimes:
        rt.broker.detach_ui()
        rt.close(timeout=WAIT)


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


def test_an_expired_plan_keeps_the_gate_closed_says_why_and_asks_for_a_new_plan(
    workdir, cleanup
):
    reached, go = threading.Event(), threading.Event()
    write = Call("write_file", {"path": "out.txt", "content": "x"})
    model = ScriptedModel({"alice": [
        Reply(tool_calls=[Call("submit_plan", {"plan": "1. write out.txt"}), Call("idle", {})]),
        # woken by the expiry: the host tells her before this call
        paused(reached, go, Reply(tool_calls=[
            write, Call("submit_plan", {"plan": "1. write out.txt (again)"})])),
        Reply(tool_calls=[Call("idle", {})]),
    ]})
    rt, clock = runtime_with_clock(workdir, model)
    cleanup(rt)
    rec = Recorder(rt)
    rt.team.spawn("alice", "coder", prompt="plan first", require_plan=True)
    rec.status("alice", "waiting_plan")
    old = rt.protocols.latest_plan("alice")
    assert rt.team.plan_block("alice") == plans.PENDING

    clock.now += EXPIRY  # the lead never reviewed it in time
    assert reached.wait(WAIT), "alice was not woken by her plan's expiry"

    told = last_user_text(model.requests_for("alice")[1])
    assert 'status="expired"' in told and "submit_plan again" in told
    block = rt.team.plan_block("alice")
    assert block is not None and "expired" in block and "submit_plan again" in block
    with pytest.raises(Refused, match="expired") as refused:
        plans.review_plan(rt, "lead", old.id, True)
    assert "must submit_plan again" in str(refused.value)
    assert rt.protocols.get(old.id).status == "pending"  # the late review changed nothing
    warnings = [e.text for e in rec.of("Notice", agent="alice", level="warning")]
    assert any("plan request expired" in w for w in warnings), warnings
    go.set()

    rec.wait_for(lambda: len(rec.of("TurnFinished", agent="alice")) == 2, what="second turn")
    refusals = [e for e in rec.of("ToolFinished", agent="alice", tool="write_file")]
    assert len(refusals) == 1 and not refusals[0].ok
    assert not (workdir / "out.txt").exists()  # fail closed: the write never ran
    new = rt.protocols.latest_plan("alice")
    assert new.id != old.id and new.status == "pending"
    rec.wait_for(lambda: rt.roster.get("alice").status == "waiting_plan", what="waiting")
    plans.review_plan(rt, "lead", new.id, True)
    assert rt.team.plan_block("alice") is None
    model.assert_used_up()


def test_an_expired_plan_is_told_once_and_shows_in_the_idle_reason(workdir, cleanup):
    model = ScriptedModel({"alice": [
        Reply(tool_calls=[Call("submit_plan", {"plan": "p"}), Call("idle", {})]),
        Reply(text="I will wait for the lead instead."),  # does not resubmit
    ]})
    rt, clock = runtime_with_clock(workdir, model)
    cleanup(rt)
    rec = Recorder(rt)
    rt.board.create("ready work")
    rt.team.spawn("alice", "coder", prompt="plan first", require_plan=True)
    rec.status("alice", "waiting_plan")
    clock.now += EXPIRY
    rec.wait_for(lambda: len(rec.of("TurnFinished", agent="alice")) == 2, what="told turn")
    rec.wait_event("StatusEvent", agent="alice", status="idle", reason=plans.EXPIRED_REASON)
    assert rt.team.wait_quiet(WAIT)
    assert rt.roster.get("alice").idle_reason == plans.EXPIRED_REASON
    assert rt.board.get(1).status == "pending"  # no auto-claim past an unapproved plan
    model.assert_used_up()  # told once: no further model call
