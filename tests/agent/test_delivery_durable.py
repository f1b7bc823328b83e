"""Exactly once in effect, across restarts: a message an agent took into its conversation is
recorded with it in the transcript, so when the inbox hands it out again (the process died
before acknowledging it) the next run drops it — for a teammate and for the lead."""

from __future__ import annotations

import json

from support.team import Recorder, Reply, make_runtime

from agent_cli.models.scripted import ScriptedModel
from agent_cli.team.resume import start_session


def texts(request) -> str:
    return "\n".join(m.text() for m in request.messages if m.role == "user")


def no_acks(rt) -> None:
    """The process 'dies' before any acknowledgement reaches the disk."""
    rt.mail.ack = lambda name, cursor: None


def test_a_teammate_never_takes_in_a_redelivered_message_after_a_restart(workdir, cleanup):
    first = ScriptedModel({"alice": [Reply("noted A")]})
    rt1 = make_runtime(workdir, first)
    no_acks(rt1)
    rec = Recorder(rt1)
    rt1.team.spawn("alice", "worker")
    rt1.mail.send("lead", "alice", "remember the word APPLE")
    rec.wait_event("TurnFinished", agent="alice")
    assert rt1.close(10.0) == []
    records = [json.loads(x) for x in
               (workdir / ".team" / "transcripts" / "alice.jsonl").read_text().splitlines()]
    [with_ids] = [r for r in records if r.get("delivered")]
    assert "APPLE" in json.dumps(with_ids["message"])
    assert len(rt1.mail.fetch("alice").messages) == 2  # APPLE and the shutdown: unacked

    second = ScriptedModel({"alice": [Reply("noted B")]})
    rt2 = make_runtime(workdir, second)
    cleanup(rt2)
    rec2 = Recorder(rt2)
    rt2.mail.send("lead", "alice", "remember the word BANANA")
    rt2.team.spawn("alice", "worker")
    rec2.status("alice", "idle")  # after its turn, and after the acknowledgement
    [request] = second.requests_for("alice")
    seen = texts(request)
    assert seen.count("APPLE") == 1  # restored from the transcript, not injected again
    assert seen.count("BANANA") == 1
    # the earlier run's shutdown request, handed out again, does not stop this run
    assert rt2.team.teammate("alice").alive()
    assert rt2.mail.fetch("alice").messages == []  # and now it is all acknowledged


def _lead_turn(rt) -> str | None:
    lead = rt.team.make_lead()
    block = rt.team.lead_inbox_block()
    if block is not None:
        lead.run_turn(block)
    return block


def test_the_lead_drops_a_redelivered_message_in_a_continued_or_a_new_session(workdir):
    model = ScriptedModel({"lead": [Reply("saw it")]})
    rt1 = make_runtime(workdir, model, session="new")
    start_session(rt1, "headless")
    no_acks(rt1)
    rt1.mail.send("alice", "lead", "task #1 done: CHERRY", type="result")
    assert "CHERRY" in _lead_turn(rt1)
    rt1.close()
    assert len(rt1.mail.fetch("lead").messages) == 1  # never acknowledged

    for ref in ("continue", "new"):
        rt = make_runtime(workdir, ScriptedModel({}), session=ref)
        start_session(rt, "headless")
        assert _lead_turn(rt) is None, ref
        assert rt.team.lead_unread() == []
        rt.close()


def test_the_lead_acknowledges_only_once_the_transcript_holds_the_message(workdir):
    model = ScriptedModel({"lead": [Reply("ok")]})
    rt = make_runtime(workdir, model, session="new")
    start_session(rt, "headless")
    lead = rt.team.make_lead()
    msg = rt.mail.send("bob", "lead", "hello lead")
    block = rt.team.lead_inbox_block()
    assert rt.mail.cursor("lead") == 0  # handed over, not yet in the conversation
    lead.run_turn(block)
    assert rt.mail.cursor("lead") > 0
    record = json.loads(rt.session.lead_transcript.read_text().splitlines()[0])
    assert record["delivered"] == [msg.id]
    rt.close()
