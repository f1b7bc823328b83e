"""The REPL driven through prompt_toolkit's pipe input with the scripted model: slash commands,
a lead turn, approvals from other threads (yes / always / no, queued), keys, start and exit."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from support.repl_harness import WAIT, Harness, ask_from_thread, make_runtime

from agent_cli.models.scripted import Call, Reply


@pytest.fixture
def harness(workdir: Path, request: pytest.FixtureRequest):
    script = getattr(request, "param", None) or {"lead": [Reply("Hello **there**.")]}
    rt, model = make_runtime(workdir, script)
    h = Harness(rt)
    h.model = model
    h.start()
    yield h
    h.quit()
    rt.close(2.0)


def test_lead_turn_prints_markdown_and_tool_lines(harness: Harness) -> None:
    out = harness.command("say hi", "Hello there.")
    assert "**" not in out  # rendered as Markdown, not raw
    assert harness.model.requests[-1].messages[-1].text().endswith("say hi")


@pytest.mark.parametrize(
    "harness",
    [{"lead": [Reply("Planning.", tool_calls=[Call("create_task", {"subject": "write tests"}),
                                              Call("list_tasks", {})]),
               Reply("Done planning.")]}],
    indirect=True,
)
def test_lead_tool_call_is_one_line_and_board_shows_it(harness: Harness) -> None:
    harness.command("plan", "Done planning.")
    screen = harness.screen.text
    assert "lead     list_tasks() ✓" in screen
    # create_task's own event says it; the "✓" tool line would say it a second time
    assert "lead     created #1 write tests" in screen and "create_task(" not in screen
    out = harness.command("/tasks", "Tasks")
    assert "[ ] │ 1 │ write tests" in out


def test_blank_line_and_unknown_command_never_reach_the_model(harness: Harness) -> None:
    harness.send("\r   \r")
    out = harness.command("/frobnicate now", "unknown command /frobnicate")
    assert "nothing was sent" in out
    harness.command("/help", "/permissions")
    assert harness.model.requests == []


@pytest.mark.parametrize("harness", [{"bob": [Reply("On it.")] * 3}], indirect=True)
def test_each_slash_command(harness: Harness, workdir: Path) -> None:
    rt = harness.rt
    rt.board.create("first task")
    rt.mail.send("alice", "lead", "the answer is 42", type="result")
    assert "/tasks [ID|graph]" in harness.command("/help", "/tasks [ID|graph]")
    assert "first task" in harness.command("/tasks", "Tasks")
    assert "first task" in harness.command("/tasks 1", "status")
    assert "lead" in harness.command("/team", "Team")
    out = harness.command("/inbox", "Lead inbox")
    assert "the answer is 42" in out
    assert len(rt.mail.peek("lead")) == 1  # peek consumed nothing
    assert "total" in harness.command("/cost", "Tokens")
    assert "added allow rule Bash(git status)" in harness.command(
        "/permissions allow Bash(git status)", "added allow")
    assert "Bash(git status)" in harness.command("/permissions", "Permission mode")
    harness.command("/permissions remove Bash(git status)", "removed allow rule")
    assert rt.policy.rules() == []
    harness.command("/mode", "permission mode: acceptEdits")
    assert rt.policy.mode == "acceptEdits"
    harness.command("/mode default", "permission mode: default")
    harness.command("/verbose", "verbose on")
    harness.command("/model", "lead model:")
    harness.command("/clear", "fresh conversation")
    harness.command("/compact", "compact")
    harness.command("/spawn bob tester", "spawned bob (tester)")
    harness.command("/shutdown bob", "asked bob to shut down")
    harness.screen.wait_for("bob      shut down")
    harness.command("/shutdown Bob!", "error: invalid teammate name")
    harness.command("!echo from-the-user", "from-the-user")
    harness.send("/quit\r")
    harness.thread.join(WAIT)
    assert harness.exit_code == 0


@pytest.mark.parametrize(
    ("keys", "decision", "allowed"),
    [("1", "allow_once", True), ("2", "allow_always", True), ("3", "deny", False)],
)
def test_approval_from_a_teammate_thread_keeps_what_was_typed(
    harness: Harness, keys: str, decision: str, allowed: bool
) -> None:
    rt = harness.rt
    harness.type_into_prompt("half a thought")
    asker, box = ask_from_thread(rt, "alice", "python main.py")
    harness.screen.wait_for("alice wants to run `python main.py`")
    assert "don't ask again for Bash(python main.py)" in harness.screen.text
    harness.send(keys)
    if keys == "3":
        harness.send("use pytest instead\r")
    asker.join(WAIT)
    d = box["decision"]
    assert d.allowed is allowed and d.answer == decision
    if keys == "2":
        assert any(e.rule == "Bash(python main.py)" for e in rt.policy.rules())
    if keys == "3":
        assert "use pytest instead" in d.message
        harness.screen.wait_for("told: use pytest instead")
    # The prompt came back with the text typed before the question.
    harness.send(" -- sent\r")
    harness.screen.wait_for("Hello there.")
    assert harness.model.requests[-1].messages[-1].text().endswith("half a thought -- sent")


def test_two_requests_are_shown_one_at_a_time(harness: Harness) -> None:
    rt = harness.rt
    first, box1 = ask_from_thread(rt, "alice", "make build")
    harness.screen.wait_for("alice wants to run")
    second, box2 = ask_from_thread(rt, "bob", "make test")
    # bob's request queues behind alice's (its broker callback fires); then answer alice.
    assert harness.repl._approval_wanted.wait(WAIT)
    assert len(rt.broker.pending()) == 2
    assert "bob wants to run" not in harness.screen.text
    harness.send("1")
    harness.screen.wait_for("bob wants to run `make test`")
    harness.send("3\r")
    first.join(WAIT)
    second.join(WAIT)
    assert box1["decision"].allowed and not box2["decision"].allowed
    text = harness.screen.text
    assert text.index("alice allowed") < text.index("bob wants to run")


def test_teammate_lines_are_held_back_during_an_approval(harness: Harness) -> None:
    from agent_cli.events import TaskEvent

    rt = harness.rt
    asker, box = ask_from_thread(rt, "alice", "make")
    harness.screen.wait_for("alice wants to run")
    rt.events.emit(TaskEvent("bob", "claimed", 7, "held line"))
    assert "held line" not in harness.screen.text
    harness.send("1")
    asker.join(WAIT)
    text = harness.screen.wait_for("claimed #7 held line")
    assert text.index("alice allowed") < text.index("claimed #7 held line")


def test_ctrl_c_clears_the_line(harness: Harness) -> None:
    harness.send("never mind\x03")
    harness.send("hi\r")
    harness.screen.wait_for("Hello there.")
    assert harness.model.requests[-1].messages[-1].text().endswith("hi")
    assert "never mind" not in harness.model.requests[-1].messages[-1].text()


def test_escape_interrupts_a_running_lead_turn(workdir: Path) -> None:
    release = threading.Event()
    started = threading.Event()

    def slow(request):
        started.set()
        release.wait(WAIT)
        return Reply("too late")

    rt, model = make_runtime(workdir, {"lead": [slow]})
    h = Harness(rt).start()
    try:
        h.send("work hard\r")
        assert started.wait(WAIT)
        shown = "".join(text for _, text in h.repl._message())
        assert "thinking…" in shown and "esc to interrupt" in shown
        h.send("\x1b")
        assert h.repl.lead.agent._cancel.wait(WAIT)
        release.set()
        h.screen.wait_for("interrupted")
        assert h.repl.lead.wait_idle(WAIT)
    finally:
        release.set()
        h.quit()


def test_start_offers_to_release_tasks_of_absent_teammates(workdir: Path) -> None:
    rt, _ = make_runtime(workdir, {})
    task = rt.board.create("left over")
    rt.board.claim(task.id, "ghost")
    h = Harness(rt)
    h.send("y\r")
    h.start()
    try:
        h.screen.wait_for("released #1 left over")
        assert rt.board.get(task.id).status == "pending"
    finally:
        h.quit()


def test_exit_shuts_teammates_down_and_says_so(workdir: Path) -> None:
    rt, _ = make_runtime(workdir, {})
    h = Harness(rt).start()
    h.command("/spawn alice tester", "spawned alice")
    h.quit()
    assert rt.team.running() == []
    assert "all teammates stopped" in h.screen.text
    assert h.exit_code == 0
