"""The demo lead's closing text is derived from this turn's tool results, never from the
scenario's script: who holds what comes from list_tasks, a teammate found running is no
failure, advice fits the mode (keys in the REPL, flags headless), and a teammate's result
says what its tools really did."""

from __future__ import annotations

from agent_cli.models.base import (
    Message,
    ModelRequest,
    TextBlock,
    ToolResultBlock,
    ToolSpec,
    collect,
)
from agent_cli.models.demo import DemoModel
from agent_cli.prompts import load_prompt

LEAD_TOOLS = ["create_task", "list_tasks", "spawn_teammate", "list_teammates",
              "request_shutdown", "review_plan", "read_file", "write_file"]
CODER = "Spawn a coder teammate and let it find work from the task board itself."


def request(messages: list[Message], system: str = "You lead a team.",
            agent: str = "lead") -> ModelRequest:
    tools = LEAD_TOOLS if agent == "lead" else ["read_file", "write_file", "complete_task"]
    return ModelRequest(agent=agent, system=system, messages=messages,
                        tools=[ToolSpec(name=n, description=n, input_schema={}) for n in tools])


def walk(results: dict[str, str], system: str = "You lead a team.") -> str:
    """Run the coder scenario, answering each call from `results` (by tool, in order)."""
    model, messages = DemoModel(pace_s=0), [Message(role="user",
                                                    content=[TextBlock(text=CODER)])]
    queues = {k: list(v) if isinstance(v, list) else [v] for k, v in results.items()}
    for _ in range(10):
        done = collect(model.stream(request(messages, system)))
        if not done.message.tool_uses():
            return done.message.text()
        messages.append(done.message)
        messages.append(Message(role="user", content=[
            ToolResultBlock(tool_use_id=u.id, content=queues[u.name].pop(0))
            for u in done.message.tool_uses()]))
    raise AssertionError("the lead never closed its turn")


BOARD = ("#1 [completed] Survey the workspace (owner alice) [role generalist]\n"
         "#4 [in_progress] Write fizzbuzz.py (owner coder) [role coder]\n"
         "#5 [pending] Run fizzbuzz.py blocked by #4 [role coder]")
CREATED = ["created task #4: #4 [pending] Write fizzbuzz.py [role coder]",
           "created task #5: #5 [pending] Run fizzbuzz.py blocked by #4 [role coder]"]


def test_the_closing_text_says_who_holds_what_as_the_board_does():
    text = walk({"create_task": CREATED, "list_tasks": BOARD,
                 "spawn_teammate": "spawned coder (coder). It claims ready tasks."})
    assert "- #4 Write fizzbuzz.py: in progress (coder)" in text
    assert "- #5 Run fizzbuzz.py: pending, blocked by #4" in text
    assert "Only a teammate with role coder may take #4 and #5: here that is coder." in text
    assert "alice" not in text  # a teammate the board shows elsewhere is not this turn's news
    assert "finds the first task" not in text  # no prediction of who will do it
    assert "1 (yes)" in text  # the REPL: keys to press


def test_a_teammate_already_running_is_no_failure_and_headless_advice_names_flags():
    text = walk({"create_task": CREATED, "list_tasks": BOARD,
                 "spawn_teammate": "coder is already running (coder); nothing new was "
                                   "started. It claims ready tasks from the board by itself."},
                system="You lead a team.\n\n" + load_prompt("headless"))
    assert "✗" not in text and "Some steps failed" not in text
    assert "Already running: coder." in text
    assert "--allow 'RULE'" in text and "--permission-mode acceptEdits" in text
    assert "1 (yes)" not in text and "/tasks" not in text


def test_a_failed_spawn_still_raises_the_alarm():
    model, messages = DemoModel(pace_s=0), [Message(role="user",
                                                    content=[TextBlock(text=CODER)])]
    for reply in (CREATED[:1], CREATED[1:]):
        done = collect(model.stream(request(messages)))
        messages += [done.message, Message(role="user", content=[
            ToolResultBlock(tool_use_id=u.id, content=r)
            for u, r in zip(done.message.tool_uses(), reply, strict=True)])]
    done = collect(model.stream(request(messages)))
    messages += [done.message, Message(role="user", content=[ToolResultBlock(
        tool_use_id=done.message.tool_uses()[0].id, content="invalid teammate name",
        is_error=True)])]
    text = collect(model.stream(request(messages))).message.text()
    assert "✗ spawn_teammate coder" in text and "Some steps failed" in text


def _append_result(read: tuple[str, bool], written: str) -> str:
    """A teammate's complete_task result for the NOTES.md task, given what its tools said."""
    task = ('<auto-claimed-task id="4" claim_token="tok">\nSubject: Add a line to NOTES.md\n'
            'Description: Add the line "Reviewed by the team." to NOTES.md (it is created '
            "if absent).\n</auto-claimed-task>")
    model, messages = DemoModel(pace_s=0), [Message(role="user", content=[TextBlock(text=task)])]
    answers = {"read_file": read, "write_file": (written, False)}
    for _ in range(4):
        done = collect(model.stream(request(messages, agent="writer")))
        calls = done.message.tool_uses()
        if calls and calls[0].name == "complete_task":
            return calls[0].input["result"]
        messages += [done.message, Message(role="user", content=[
            ToolResultBlock(tool_use_id=u.id, content=answers[u.name][0],
                            is_error=answers[u.name][1]) for u in calls])]
    raise AssertionError("the teammate never completed")


def test_a_teammate_result_says_what_is_true_about_the_file():
    missing = _append_result(("no such file: NOTES.md", True), "Created NOTES.md (1 lines)")
    assert missing == 'created NOTES.md with the line "Reviewed by the team."'
    there = _append_result(("     1\t# Notes", False), "Overwrote NOTES.md (2 lines)")
    assert there == 'added the line "Reviewed by the team." to NOTES.md'
