"""The REPL's lead answers its teammates: a plan request that arrives while the lead is not in
a turn starts a review turn by itself (with a visible line), and the toolbar counts the
lead's unread messages until a turn takes them in."""

from __future__ import annotations

import re
from pathlib import Path

from support.repl_harness import WAIT, Harness, make_runtime

from agent_cli.models.base import ModelRequest
from agent_cli.models.scripted import Call, Reply
from agent_cli.ui.toolbar import StatusSnapshot, toolbar_fragments

REQUEST_ID_RE = re.compile(r'type="plan_approval_request" request_id="([0-9a-f]+)"')


def review_what_arrived(request: ModelRequest) -> Reply:
    """The lead's turn: approve the plan request its inbox block names."""
    text = request.messages[-1].text()
    match = REQUEST_ID_RE.search(text)
    assert match, f"the lead's turn did not open with the plan request:\n{text}"
    return Reply(
        "Reviewing.",
        tool_calls=[
            Call(
                "review_plan",
                {"request_id": match.group(1), "approve": True, "feedback": "go ahead"},
            )
        ],
    )


def test_a_plan_request_starts_a_lead_review_turn_without_the_user(workdir: Path) -> None:
    script = {
        "writer": [
            Reply(tool_calls=[Call("submit_plan", {"plan": "1. add a line"})]),
            Reply("Waiting for the lead."),
            Reply("Plan approved; nothing else to do."),
        ],
        "lead": [review_what_arrived, Reply("Approved writer's plan.")],
    }
    rt, model = make_runtime(workdir, script)
    h = Harness(rt).start()
    try:
        rt.team.spawn("writer", "writer", prompt="plan first", require_plan=True)
        h.screen.wait_for("writer's plan waits for the lead: the lead reviews it now")
        h.screen.wait_for("Approved writer's plan.")
        assert h.repl.lead.wait_idle(WAIT)
        latest = rt.protocols.latest_plan("writer")
        assert latest is not None and latest.status == "approved"
        assert rt.team.wait_quiet(WAIT)
        model.assert_used_up()
        assert h.repl.status.get().lead_unread == 0  # the turn took the request in
    finally:
        h.quit()


def test_toolbar_counts_unread_lead_messages_until_a_turn_takes_them(workdir: Path) -> None:
    rt, model = make_runtime(workdir, {"lead": [Reply("Got both.")]})
    h = Harness(rt).start()
    try:
        rt.mail.send("alice", "lead", "task #1 done", type="result")
        rt.mail.send("bob", "lead", "a question", type="message")
        h.repl.status.mark_stale()
        text = "".join(t for _, t in h.repl._toolbar())
        assert "✉ 2" in text
        h.command("thanks", "Got both.")
        assert h.repl.lead.wait_idle(WAIT)
        assert "task #1 done" in model.requests[-1].messages[-1].text()
        h.repl.status.mark_stale()
        assert "✉" not in "".join(t for _, t in h.repl._toolbar())
    finally:
        h.quit()


def test_toolbar_says_when_a_plan_waits() -> None:
    snap = StatusSnapshot(lead_unread=3, plans_waiting=1)
    text = "".join(t for _, t in toolbar_fragments(snap, "demo", "default", 0))
    assert "✉ 3 for lead, 1 plan" in text
    quiet = "".join(t for _, t in toolbar_fragments(StatusSnapshot(), "demo", "default", 0))
    assert "for lead" not in quiet


def test_a_narrow_toolbar_keeps_the_mail_and_tokens_on_screen() -> None:
    from types import SimpleNamespace

    from agent_cli.ui.toolbar import Counts

    members = [
        SimpleNamespace(name="alice", status="working", current_task=5),
        SimpleNamespace(name="bob", status="idle", current_task=None),
    ]
    snap = StatusSnapshot(members=members, counts=Counts(done=5, in_progress=1), lead_unread=4)
    wide = "".join(t for _, t in toolbar_fragments(snap, "demo", "default", 14_000))
    assert len(wide) > 80  # what got cut at 80 columns before
    text = "".join(t for _, t in toolbar_fragments(snap, "demo", "default", 14_000, width=80))
    assert len(text) <= 80, text
    assert "alice ▶ #5" in text and "tasks 5/6 done" in text
    assert "✉ 4" in text and "14.0k" in text


def test_typing_that_a_question_interrupts_comes_back_in_the_prompt(workdir: Path) -> None:
    """Lines finished with Enter at the question are submitted in order once it is
    answered; the unfinished rest comes back in the prompt."""
    from support.repl_harness import ask_from_thread

    rt, model = make_runtime(workdir, {"lead": [Reply("Noted."), Reply("Noted again.")]})
    h = Harness(rt).start()
    try:
        h.type_into_prompt("half")
        asker, box = ask_from_thread(rt, "alice", "make")
        h.screen.wait_for("alice wants to run `make`")
        h.send(" a thought\r/tasks\r/team\rnext")  # letters and Enter never answer
        h.send("1")
        asker.join(WAIT)
        assert box["decision"].allowed
        text = h.screen.wait_for("Noted.")
        after = text[text.index("alice allowed"):]
        assert after.index("> half a thought") < after.index("> /tasks") < after.index("> /team")
        h.screen.wait_for("No teammates yet")  # /team ran
        assert model.requests[-1].messages[-1].text() == "half a thought"
        h.send(" one\r")
        h.screen.wait_for("Noted again.")
        assert model.requests[-1].messages[-1].text().endswith("next one")
        history = list(h.repl.session.history.get_strings())
        assert history[-4:] == ["half a thought", "/tasks", "/team", "next one"]
    finally:
        h.quit()
