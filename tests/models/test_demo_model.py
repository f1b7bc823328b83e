"""The demo model on its own: the Model interface, determinism, cancellation, how it reads a
task, and that its closing words only report what the tools returned."""

from __future__ import annotations

import threading

import pytest

from agent_cli.errors import Interrupted
from agent_cli.models.base import (
    Message,
    Model,
    ModelRequest,
    ResponseDone,
    TextBlock,
    TextDelta,
    ToolCall,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    collect,
)
from agent_cli.models.demo import DemoModel
from agent_cli.models.demo.teammate import parse_steps

LEAD_TOOLS = ["create_task", "update_task", "list_tasks", "get_task", "spawn_teammate",
              "list_teammates", "send_message", "broadcast", "request_shutdown", "review_plan",
              "read_file", "write_file", "edit_file", "glob", "grep", "shell"]
MATE_TOOLS = ["list_tasks", "get_task", "claim_task", "complete_task", "submit_plan",
              "send_message", "idle", "read_file", "write_file", "edit_file", "glob", "grep",
              "shell"]


def specs(names):
    return [ToolSpec(name=n, description=n, input_schema={"type": "object"}) for n in names]


def user(*texts: str) -> Message:
    return Message(role="user", content=[TextBlock(text=t) for t in texts])


def request(agent: str, messages: list[Message], tools=None) -> ModelRequest:
    names = tools if tools is not None else (LEAD_TOOLS if agent == "lead" else MATE_TOOLS)
    return ModelRequest(agent=agent, system="You are on a team.", messages=messages,
                        tools=specs(names))


def answer(messages: list[Message], done: ResponseDone, results: dict[str, tuple[str, bool]]):
    """Append the assistant turn and a tool result per call: results maps tool -> (text, err)."""
    messages.append(done.message)
    blocks = []
    for use in done.message.tool_uses():
        text, is_error = results.get(use.name, ("ok", False))
        blocks.append(ToolResultBlock(tool_use_id=use.id, content=text, is_error=is_error))
    messages.append(Message(role="user", content=blocks))


def test_demo_model_is_a_model_named_demo_and_streams_text_calls_then_done():
    model = DemoModel()
    assert isinstance(model, Model) and model.name == "demo"
    events = list(model.stream(request("lead", [user("Shut down alice")])))
    kinds = [type(e) for e in events]
    assert kinds[-1] is ResponseDone and kinds.count(ResponseDone) == 1
    assert TextDelta in kinds and ToolCall in kinds
    done = events[-1]
    calls = [e.block for e in events if isinstance(e, ToolCall)]
    assert done.message.tool_uses() == calls
    assert calls[0].name == "request_shutdown" and calls[0].input == {"name": "alice"}
    assert done.stop_reason == "tool_use" and done.usage.output_tokens > 0
    streamed = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert streamed == done.message.text()


def test_same_request_same_reply():
    model = DemoModel(pace_s=0)
    req = request("lead", [user("Create 3 tasks on the board, then spawn alice and bob.")])
    first, second = model.reply(req), model.reply(req)
    assert (first.text, first.tool_calls) == (second.text, second.tool_calls)
    assert [call.name for call in first.tool_calls] == ["create_task"] * 3


def test_a_set_cancel_interrupts_the_stream():
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(Interrupted):
        list(DemoModel().stream(request("lead", [user("Shut down alice")]), cancel))


def test_unknown_prompt_gets_the_list_of_demo_prompts_and_no_tool_call():
    done = collect(DemoModel(pace_s=0).stream(request("lead", [user("write me a compiler")])))
    assert done.message.tool_uses() == []
    text = done.message.text()
    assert text.startswith("(demo model)") and "Shut down alice" in text


def test_lead_reports_a_failed_step_and_does_not_go_on():
    model = DemoModel(pace_s=0)
    messages = [user("Create tasks with dependencies. Watch teammates respect the blocked order.")]
    done = collect(model.stream(request("lead", messages)))
    assert [u.name for u in done.message.tool_uses()] == ["create_task", "create_task"]
    answer(messages, done, {"create_task": ("board is read-only: nothing was written", True)})
    done = collect(model.stream(request("lead", messages)))
    assert done.message.tool_uses() == []  # no C, no spawn on top of a failure
    text = done.message.text()
    assert "✗" in text and "board is read-only" in text and "✓" not in text


def test_lead_walks_the_verify_scenario_and_never_overwrites_existing_files():
    model = DemoModel(pace_s=0)
    messages = [user("Check whether main.py's output matches expected.txt")]
    done = collect(model.stream(request("lead", messages)))
    assert {u.input["path"] for u in done.message.tool_uses()} == {"main.py", "expected.txt"}
    answer(messages, done, {"read_file": ("     1\t43", False)})  # both exist
    done = collect(model.stream(request("lead", messages)))
    names = [u.name for u in done.message.tool_uses()]
    assert names == ["create_task", "create_task"]  # no write_file: the files are there
    results = iter(["created task #7: #7 [pending] source",
                    "created task #8: #8 [pending] expected"])
    messages.append(done.message)
    messages.append(Message(role="user", content=[
        ToolResultBlock(tool_use_id=u.id, content=next(results))
        for u in done.message.tool_uses()]))
    done = collect(model.stream(request("lead", messages)))
    (verify,) = done.message.tool_uses()
    assert verify.input["subject"] == "verify" and verify.input["blocked_by"] == [7, 8]
    assert verify.input["verify"] == {"command": "python main.py",
                                      "expected_stdout_file": "expected.txt"}


def test_lead_reviews_a_plan_request_from_its_inbox():
    inbox = ('<inbox>\n<message from="writer" type="plan_approval_request" '
             'request_id="abc123">plan for approval: add a line</message>\n</inbox>')
    model = DemoModel(pace_s=0)
    done = collect(model.stream(request("lead", [user(inbox, "check the inbox")])))
    (call,) = done.message.tool_uses()
    assert call.name == "review_plan"
    assert call.input["request_id"] == "abc123" and call.input["approve"] is True


def test_parse_steps_reads_runs_and_writes_what_the_task_names():
    steps = parse_steps("Run `python main.py` and compare what it prints with expected.txt.")
    assert [(s.kind, s.target) for s in steps] == [("read", "expected.txt"),
                                                   ("run", "python main.py")]
    steps = parse_steps('Add the line "Reviewed." to NOTES.md (it is created if absent).')
    assert [(s.kind, s.target, s.content) for s in steps] == [
        ("read", "NOTES.md", ""), ("append", "NOTES.md", "Reviewed.\n")]
    steps = parse_steps("Write f.py containing:\n```python\nprint(1)\n```")
    assert [(s.kind, s.target, s.content) for s in steps] == [("write", "f.py", "print(1)\n")]


def claimed(task_id: int, token: str, description: str) -> str:
    return (f'<auto-claimed-task id="{task_id}" claim_token="{token}">\nSubject: t\n'
            f"Description: {description}\nYou own this task now. Do it, then call "
            "complete_task with this task_id and claim_token and a short result.\n"
            "</auto-claimed-task>")


def test_teammate_does_the_task_then_completes_with_its_token():
    model = DemoModel(pace_s=0)
    messages = [user(claimed(3, "tok-3", "Run `python main.py` and compare with expected.txt."))]
    done = collect(model.stream(request("alice", messages)))
    assert [u.name for u in done.message.tool_uses()] == ["read_file"]
    answer(messages, done, {"read_file": ("     1\t42", False)})
    done = collect(model.stream(request("alice", messages)))
    (run,) = done.message.tool_uses()
    assert (run.name, run.input["command"]) == ("shell", "python main.py")
    answer(messages, done, {"shell": ("42\n[exit 0]", False)})
    done = collect(model.stream(request("alice", messages)))
    (complete,) = done.message.tool_uses()
    assert complete.name == "complete_task"
    assert complete.input["task_id"] == 3 and complete.input["claim_token"] == "tok-3"
    assert "main.py prints 42" in complete.input["result"]


@pytest.mark.parametrize("failing", ["shell", "complete_task"])
def test_teammate_reports_a_denial_or_refused_completion_and_idles(failing):
    model = DemoModel(pace_s=0)
    messages = [user(claimed(3, "tok", "Run `python main.py`."))]
    errors = {failing: ("The user denied this command." if failing == "shell"
                        else "task #3 not completed: expected stdout '43', got '42'", True)}
    ok = {"shell": ("42\n[exit 0]", False)}
    for _ in range(3):
        done = collect(model.stream(request("alice", messages)))
        if any(u.name in errors for u in done.message.tool_uses()):
            break
        answer(messages, done, ok)
    answer(messages, done, {**ok, **errors})
    done = collect(model.stream(request("alice", messages)))
    calls = done.message.tool_uses()
    assert [u.name for u in calls] == ["send_message", "idle"]
    assert calls[0].input["to"] == "lead" and "#3" in calls[0].input["content"]
    assert "complete_task" not in [u.name for u in calls]


def test_teammate_submits_a_plan_when_the_gate_asks_for_one():
    model = DemoModel(pace_s=0)
    messages = [user(claimed(1, "tok", 'Write a.txt containing "x".'))]
    done = collect(model.stream(request("writer", messages)))
    answer(messages, done, {"write_file": (
        "plan approval required: call submit_plan first; only read tools, send_message and "
        "submit_plan are allowed", True)})
    done = collect(model.stream(request("writer", messages)))
    calls = done.message.tool_uses()
    assert [u.name for u in calls] == ["submit_plan", "idle"]
    assert "write a.txt" in calls[0].input["plan"]


def test_compaction_summary_keeps_the_unfinished_task():
    messages = [user(claimed(5, "tok-5", "Read a.txt.")),
                Message(role="assistant", content=[ToolUseBlock(id="t1", name="read_file",
                                                                input={"path": "a.txt"})]),
                Message(role="user", content=[ToolResultBlock(tool_use_id="t1", content="x")])]
    done = collect(DemoModel(pace_s=0).stream(request("alice", messages, tools=[])))
    text = done.message.text()
    assert 'id="5"' in text and 'claim_token="tok-5"' in text
