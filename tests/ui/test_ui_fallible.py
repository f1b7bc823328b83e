"""What the REPL shows when a model misbehaves: a teammate's reminders and the host's stall
report as lines, the stall as its idle reason in /team, and a retry wait counting down in the
toolbar and /team ("retrying in 30 s (overloaded, attempt 2/8)")."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.repl_harness import WAIT, Harness, make_runtime

from agent_cli.errors import Overloaded
from agent_cli.events import RetryWait
from agent_cli.models.scripted import Reply
from agent_cli.ui.toolbar import StatusSnapshot, toolbar_fragments


@pytest.fixture
def harness_for(workdir: Path):
    made = []

    def make(script: dict) -> Harness:
        rt, model = make_runtime(workdir, script)
        h = Harness(rt)
        h.model = model
        h.start()
        made.append(h)
        return h

    yield make
    for h in made:
        h.quit()
        h.rt.close(2.0)


def test_reminders_and_the_stall_report_show_and_team_gives_the_reason(harness_for):
    h = harness_for({"bob": [Reply("On it.")] * 3})
    h.rt.board.create("first task")
    h.command("/spawn bob tester", "spawned bob (tester)")
    h.screen.wait_for("reminded to finish #1 'first task'", count=2)
    h.screen.wait_for("→ lead: bob ended 3 turns without completing #1")
    h.screen.wait_for("bob      is idle: holds #1: bob ended 3 turns")
    out = h.command("/team", "Team")
    assert "holds #1: bob ended 3 turns" in out
    assert h.model.remaining() == {} or not any(h.model.remaining().values())


def test_a_retry_wait_shows_in_toolbar_and_team(harness_for):
    h = harness_for({"bob": [Overloaded("busy", retry_after=30)]})
    h.rt.board.create("first task")
    h.command("/spawn bob tester", "spawned bob (tester)")
    h.screen.wait_for("retrying in 30 s (overloaded, attempt 2/8)")
    assert h.rt.retries.describe("bob").startswith("retrying in")
    out = h.command("/team", "Team")
    assert "retrying in" in out and "(overloaded, attempt 2/8)" in out
    h.repl.status.mark_stale()
    snap = h.repl.status.get()
    text = "".join(t for _, t in toolbar_fragments(snap, "m", "default", 0))
    assert "retrying in" in text and "attempt 2/8" in text
    h.rt.team.teammate("bob").agent.interrupt()  # Esc for a teammate: the wait ends now
    h.screen.wait_for("bob      is idle: holds #1", timeout=WAIT)
    assert h.rt.retries.describe("bob") == ""


def test_toolbar_names_the_lead_waiting_to_retry():
    wait = RetryWait("lead", 2, 8, 4.0, "overloaded", "busy", until=0.0)
    snap = StatusSnapshot(retries={"lead": wait.describe()})
    text = "".join(t for _, t in toolbar_fragments(snap, "claude-x", "default", 0))
    assert "lead retrying in 4 s (overloaded, attempt 3/8)" in text
