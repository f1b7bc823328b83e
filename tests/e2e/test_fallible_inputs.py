"""A model that calls a tool with bad input gets an error that says exactly what was wrong,
nothing runs, and it can try again: missing fields, wrong types, an unknown tool, and a JSON
string where an object belongs. Real SDK against the wire-level stub."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.e2e_claude import claimed_task
from support.fallible import Crew, assert_all_valid, complete, run_headless_json
from support.stub_server import Reply, StubServer, ToolUse


@pytest.fixture
def stub() -> Iterator[StubServer]:
    with StubServer() as server:
        yield server


def _bad_calls(body):
    task_id, token = claimed_task(body)
    return {
        "missing-fields": (ToolUse("complete_task", {"task_id": task_id}),
                           "complete_task", ["claim_token: Field required",
                                             "result: Field required"]),
        "wrong-types": (ToolUse("complete_task", {"task_id": "the first one",
                                                  "claim_token": token, "result": ["x"]}),
                        "complete_task", ["task_id: Input should be a valid integer",
                                          "result: Input should be a valid string"]),
        "unknown-tool": (ToolUse("finish_task", {"task_id": task_id}), "finish_task",
                         ["unknown tool 'finish_task'", "complete_task"]),
        "json-string": (ToolUse("complete_task", '"{\\"task_id\\": 1}"'), "complete_task",
                        ["must be a JSON object, got a string",
                         "pass the object itself, not a JSON string holding it"]),
        "not-json": (ToolUse("complete_task", '{"task_id": 1,'), "complete_task",
                     ["was not valid JSON"]),
    }


@pytest.mark.parametrize("case", ["missing-fields", "wrong-types", "unknown-tool",
                                  "json-string", "not-json"])
def test_bad_tool_input_is_an_error_that_says_which_and_runs_nothing(workdir, stub, case):
    seen = {}

    def alice(body, turn):
        call, name, fragments = _bad_calls(body)[case]
        if turn == 0:
            return Reply(tool_calls=[call])
        [(tool, block)] = [(n, b) for n, b in _answered(body)]
        seen["error"] = (tool, block.get("is_error"), str(block["content"]))
        return complete(body, "right the second time")

    crew = Crew({"alice": alice})
    stub.responder = crew
    report, code, _ = run_headless_json(workdir, stub)

    _, name, fragments = _bad_calls(crew.requests_of(stub, "alice")[0])[case]
    tool, is_error, text = seen["error"]
    assert (tool, is_error) == (name, True)
    for fragment in fragments:
        assert fragment in text
    assert (report["outcome"], code) == ("completed", 0)
    events = [e["action"] for e in _events(workdir)]
    assert events == ["created", "claimed", "completed"]  # the bad call changed nothing
    assert_all_valid(stub, crew)


def _answered(body):
    from support.e2e_claude import answered_calls

    return answered_calls(body)


def _events(workdir):
    from agent_cli.board.store import TaskBoard

    return TaskBoard(workdir / ".tasks").events()
