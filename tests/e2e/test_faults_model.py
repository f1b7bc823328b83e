"""Model faults on the wire, through the real Anthropic adapter and SDK, for a teammate.

The stub server (tests/support/stub_server.py) answers each request from a queue; here a queue entry
may also be a function of the request body, so a reply can carry the claim token the host
just injected. Transient HTTP errors (429 with retry-after, 529, 500) are retried by the SDK
and the teammate finishes its task. A failure that outlives the retries (or breaks a stream
already under way) fails the teammate: its task goes back to pending, the lead gets an error
message, its status is failed, and another teammate picks the task up. A model that sends
invalid tool JSON, names an unknown tool, or is cut by max_tokens inside a tool call gets an
error the next round (or stops the turn clearly) and never runs anything by accident.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import anthropic
import pytest
from support.stub_server import STUB_MODEL, Fault, MidStream, Reply, StubServer, ToolUse
from support.team import WAIT, Recorder, complete_claimed

from agent_cli.app import open_runtime
from agent_cli.models.anthropic import AnthropicModel
from agent_cli.models.scripted import ScriptedModel
from agent_cli.runtime import RuntimeConfig

TOKEN_RE = re.compile(r'<auto-claimed-task id="(\d+)" claim_token="([0-9a-f]+)"')


class ComputingStub(StubServer):
    """A stub whose queue may hold `fn(request_body) -> Reply | Fault | MidStream`."""

    def _next(self):
        item = super()._next()
        if callable(item):
            with self._cond:
                body = self.requests[-1]
            return item(body)
        return item


def claimed(body: dict) -> tuple[int, str]:
    for msg in reversed(body["messages"]):
        for block in msg["content"] if isinstance(msg["content"], list) else []:
            m = TOKEN_RE.search(block.get("text", "")) if block.get("type") == "text" else None
            if m:
                return int(m.group(1)), m.group(2)
    raise AssertionError("no auto-claimed task in the request")


def complete(body: dict) -> Reply:
    task_id, token = claimed(body)
    return Reply(tool_calls=[ToolUse("complete_task", {
        "task_id": task_id, "claim_token": token, "result": "done over the wire"})])


def last_results(body: dict) -> list[dict]:
    content = body["messages"][-1]["content"]
    return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]


@pytest.fixture
def stub() -> Iterator[ComputingStub]:
    with ComputingStub() as server:
        yield server


def adapter(stub: StubServer) -> AnthropicModel:
    client = anthropic.Anthropic(base_url=stub.url, api_key="test", max_retries=0)
    return AnthropicModel(STUB_MODEL, client=client)


def runtime_with(workdir, stub, others: ScriptedModel | None = None):
    wire = adapter(stub)
    scripted = others or ScriptedModel()

    def factory(agent: str, spec: str | None):
        return wire if agent == "alice" else scripted

    return open_runtime(workdir, RuntimeConfig(model_factory=factory, idle_timeout_s=0,
                                               check_interval_s=0.02))


@pytest.mark.parametrize("fault", [
    Fault.rate_limited(retry_after="0.01"),
    Fault.overloaded(retry_after="0.01"),
    Fault.server_error(retry_after="0.01"),
], ids=["429", "529", "500"])
def test_a_transient_http_error_is_retried_and_the_task_gets_done(workdir, stub, fault):
    stub.push(fault, complete)
    rt = runtime_with(workdir, stub)
    rec = Recorder(rt)
    try:
        task = rt.board.create("wire task")
        rt.team.spawn("alice", "worker")
        rec.wait_event("TaskEvent", action="completed", task_id=task.id)
        assert rt.team.wait_quiet(WAIT)
    finally:
        assert rt.close(timeout=WAIT) == []
    assert rt.board.get(task.id).owner == "alice"
    assert len(stub.requests) == 2  # the fault; its retry, answered with the completion
    assert stub.rejections == []
    assert not rec.of("StatusEvent", agent="alice", status="failed")


@pytest.mark.parametrize("faults", [
    [Fault.overloaded(retry_after="0.01")] * 8,  # every one of the 8 attempts
    [Fault.rate_limited(retry_after="0.01")] * 8,
    [MidStream("reset")],
    [MidStream("error", error_type="overloaded_error")],
], ids=["529-after-retries", "429-after-retries", "connection-reset", "error-event"])
def test_a_lasting_model_failure_releases_the_task_and_others_carry_on(workdir, stub, faults):
    stub.push(*faults)
    bob = ScriptedModel({"bob": [complete_claimed("bob did it")]})
    rt = runtime_with(workdir, stub, bob)
    rec = Recorder(rt)
    try:
        task = rt.board.create("fragile task")
        rt.team.spawn("alice", "worker")
        failed = rec.status("alice", "failed")
        rt.team.spawn("bob", "worker")
        rec.wait_event("TaskEvent", action="completed", task_id=task.id)
        assert rt.team.wait_quiet(WAIT)
        block = rt.team.lead_inbox_block()
    finally:
        assert rt.close(timeout=WAIT) == []
    assert "model error" in failed.reason
    released = [e for e in rt.board.events() if e["action"] == "released"]
    assert [(e["task_id"], e["details"]["owner"]) for e in released] == [(task.id, "alice")]
    done = rt.board.get(task.id)
    assert (done.status, done.owner, done.result) == ("completed", "bob", "bob did it")
    assert 'from="alice" type="error">alice failed: model error' in block
    assert f"task #{task.id} released to pending" in block
    assert rt.roster.get("alice").status == "failed"
    assert stub.rejections == []


def _bad_then(bad: Callable[[dict], Reply], check: Callable[[dict], None]):
    """Queue entries: a bad reply to the claimed task, then check the error and complete."""
    seen: dict = {}

    def first(body: dict) -> Reply:
        seen["task"] = claimed(body)
        return bad(body)

    def second(body: dict) -> Reply:
        check(body)
        task_id, token = seen["task"]
        return Reply(tool_calls=[ToolUse("complete_task", {
            "task_id": task_id, "claim_token": token, "result": "second attempt"})])

    return first, second


def _expect_error(fragment: str) -> Callable[[dict], None]:
    def check(body: dict) -> None:
        results = last_results(body)
        assert len(results) == 1 and results[0].get("is_error") is True
        assert fragment in str(results[0]["content"])

    return check


@pytest.mark.parametrize("bad,fragment", [
    (lambda body: Reply(tool_calls=[ToolUse("complete_task", '{"task_id": 1, "claim_')]),
     "not valid JSON"),
    (lambda body: Reply(tool_calls=[ToolUse("delete_everything", {"path": "/"})]),
     "unknown tool 'delete_everything'"),
], ids=["invalid-json", "unknown-tool"])
def test_a_broken_tool_call_is_an_error_result_then_the_task_completes(
    workdir, stub, bad, fragment
):
    first, second = _bad_then(bad, _expect_error(fragment))
    stub.push(first, second)
    rt = runtime_with(workdir, stub)
    rec = Recorder(rt)
    try:
        task = rt.board.create("careful task")
        rt.team.spawn("alice", "worker")
        rec.wait_event("TaskEvent", action="completed", task_id=task.id)
        assert rt.team.wait_quiet(WAIT)
    finally:
        assert rt.close(timeout=WAIT) == []
    assert rt.board.get(task.id).result == "second attempt"
    assert stub.rejections == []
    assert not rec.of("StatusEvent", agent="alice", status="failed")


def test_max_tokens_inside_a_tool_call_runs_nothing_and_the_turn_continues(workdir, stub):
    seen: dict = {}

    def cut(body: dict) -> Reply:
        seen["task"] = claimed(body)
        return Reply("Completing now.", [ToolUse("complete_task", '{"task_id": 1, "cla')],
                     stop_reason="max_tokens")

    def resumed(body: dict) -> Reply:
        text = " ".join(b.get("text", "") for m in body["messages"] if m["role"] == "user"
                        for b in m["content"] if isinstance(b, dict))
        assert "cut by max_tokens inside a call to complete_task" in text
        task_id, token = seen["task"]
        return Reply(tool_calls=[ToolUse("complete_task", {
            "task_id": task_id, "claim_token": token, "result": "after the cut"})])

    stub.push(cut, resumed)
    rt = runtime_with(workdir, stub)
    rec = Recorder(rt)
    try:
        task = rt.board.create("long task")
        rt.team.spawn("alice", "worker")
        rec.wait_event("TaskEvent", action="completed", task_id=task.id)
        assert rt.team.wait_quiet(WAIT)
    finally:
        assert rt.close(timeout=WAIT) == []
    assert rt.board.get(task.id).result == "after the cut"
    assert rec.of("AgentError", agent="alice", error_kind="max_tokens")
    # the continuation asked for a larger budget; nothing the cut call held ever ran
    assert [b["max_tokens"] for b in stub.requests] == [8192, 16384]
    assert len(rt.board.events()) == 3  # created, claimed, completed
    assert stub.rejections == []
