"""The wire-level stub itself: SSE framing as the API sends it, and the API's 400 rules."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from support.stub_rules import validate
from support.stub_server import Fault, Reply, StubServer, ToolUse

TOOL = {"name": "glob", "description": "find", "input_schema": {"type": "object"}}


@pytest.fixture
def stub() -> Iterator[StubServer]:
    with StubServer() as server:
        yield server


def post(stub: StubServer, body: Any, path: str = "/v1/messages", key: str | None = "k"):
    """POST raw JSON; return (status, headers, body text)."""
    headers = {"content-type": "application/json"}
    if key:
        headers["x-api-key"] = key
    req = urllib.request.Request(
        stub.url + path, data=json.dumps(body).encode(), headers=headers, method="POST"
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, dict(resp.headers), resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read().decode()


def body(messages: list[dict], **extra: Any) -> dict:
    return {"model": "m", "max_tokens": 100, "messages": messages, **extra}


def user(*content: Any) -> dict:
    return {"role": "user", "content": list(content) if content else "hi"}


def assistant(*content: Any) -> dict:
    return {"role": "assistant", "content": list(content)}


def tool_use(tid: str, name: str = "glob") -> dict:
    return {"type": "tool_use", "id": tid, "name": name, "input": {}}


def tool_result(tid: str) -> dict:
    return {"type": "tool_result", "tool_use_id": tid, "content": "ok"}


def sse_events(text: str) -> list[tuple[str, dict]]:
    events = []
    for frame in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in frame.splitlines())
        events.append((lines["event"], json.loads(lines["data"])))
    return events


def test_stream_is_framed_like_the_api(stub: StubServer) -> None:
    stub.push(Reply("Hello, world", [ToolUse("glob", {"pattern": "*.py"})]))
    status, headers, text = post(stub, body([user()], stream=True, tools=[TOOL]))
    assert status == 200 and headers["content-type"] == "text/event-stream"
    events = sse_events(text)
    names = [name for name, _ in events]
    assert names[:2] == ["message_start", "ping"]
    assert names[-2:] == ["message_delta", "message_stop"]
    assert names.count("content_block_start") == 2 == names.count("content_block_stop")
    assert all(data["type"] == name for name, data in events)
    deltas = [d["delta"] for n, d in events if n == "content_block_delta"]
    text_out = "".join(d["text"] for d in deltas if d["type"] == "text_delta")
    json_out = "".join(d["partial_json"] for d in deltas if d["type"] == "input_json_delta")
    assert text_out == "Hello, world"
    assert json.loads(json_out) == {"pattern": "*.py"}
    final = events[-2][1]
    assert final["delta"]["stop_reason"] == "tool_use"
    assert final["usage"]["output_tokens"] > 0


def test_non_streaming_request_gets_a_whole_message(stub: StubServer) -> None:
    stub.push(Reply("whole"))
    status, _, text = post(stub, body([user()]))
    message = json.loads(text)
    assert status == 200
    assert message["content"] == [{"type": "text", "text": "whole"}]
    assert message["stop_reason"] == "end_turn"


def test_count_tokens(stub: StubServer) -> None:
    status, _, text = post(
        stub, {"model": "m", "messages": [user()]}, path="/v1/messages/count_tokens"
    )
    assert status == 200 and json.loads(text)["input_tokens"] > 0


def test_faults_carry_the_api_error_body_and_retry_after(stub: StubServer) -> None:
    stub.push(Fault.rate_limited(retry_after="3"), Fault.overloaded())
    status, headers, text = post(stub, body([user()]))
    assert status == 429 and headers["retry-after"] == "3"
    assert json.loads(text)["error"]["type"] == "rate_limit_error"
    status, _, text = post(stub, body([user()]))
    assert status == 529 and json.loads(text)["error"]["type"] == "overloaded_error"


def test_missing_credentials_is_401(stub: StubServer) -> None:
    status, _, text = post(stub, body([user()]), key=None)
    assert status == 401 and json.loads(text)["error"]["type"] == "authentication_error"


def test_empty_queue_without_default_is_a_loud_non_retryable_500(stub: StubServer) -> None:
    status, headers, text = post(stub, body([user()]))
    assert status == 500 and headers["x-should-retry"] == "false"
    assert "no scripted response" in text


@pytest.mark.parametrize(
    ("request_body", "message"),
    [
        (body([assistant({"type": "text", "text": "x"}), user()]), "first message"),
        (body([user(), user()]), "roles must alternate"),
        (body([user(), assistant(tool_use("t1")), user()], tools=[TOOL]), "without `tool_result`"),
        (body([user(), assistant(tool_use("t1"))], tools=[TOOL]), "without `tool_result`"),
        (
            body([user(), assistant(tool_use("t1")), user(tool_result("t2"))], tools=[TOOL]),
            "unexpected `tool_use_id`",
        ),
        (body([user(tool_result("t9"))], tools=[TOOL]), "unexpected `tool_use_id`"),
        (body([user(), assistant(tool_use("t1")), user(tool_result("t1"))]), "must define tools"),
        (body([{"role": "user", "content": []}]), "non-empty content"),
        (body([{"role": "user", "content": ""}]), "non-empty content"),
        (body([user({"type": "text", "text": ""})]), "text content blocks must be non-empty"),
        (body([user(), assistant({"type": "text", "text": "prefill"})]), "no prefill"),
        (body([user()], tools=[TOOL, TOOL]), "Tool names must be unique"),
        ({"model": "m", "messages": [user()]}, "max_tokens"),
        (body([user()], system=[{"type": "text", "text": ""}]), "system.0"),
        (body([]), "at least one message"),
    ],
)
def test_invalid_conversations_are_rejected_like_the_api(
    stub: StubServer, request_body: dict, message: str
) -> None:
    stub.default = Reply("should not be reached")
    status, _, text = post(stub, request_body)
    error = json.loads(text)
    assert status == 400
    assert error["type"] == "error" and error["error"]["type"] == "invalid_request_error"
    assert message in error["error"]["message"]
    assert stub.rejections == [error["error"]["message"]]


def test_valid_tool_round_trip_with_parallel_calls_is_accepted() -> None:
    conversation = body(
        [
            user(),
            assistant({"type": "text", "text": "two calls"}, tool_use("a"), tool_use("b")),
            user(tool_result("b"), tool_result("a"), {"type": "text", "text": "and more"}),
            assistant({"type": "text", "text": "done"}),
            user(),
        ],
        tools=[TOOL],
        system="be brief",
    )
    assert validate(conversation) is None


def test_more_than_four_cache_breakpoints_is_rejected() -> None:
    marked = {"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}}
    assert "maximum of 4" in (validate(body([user(*[marked] * 5)])) or "")
    assert validate(body([user(*[marked] * 4)])) is None


def test_duplicate_tool_result_is_rejected() -> None:
    conv = body([user(), assistant(tool_use("a")), user(tool_result("a"), tool_result("a"))])
    assert "unexpected `tool_use_id`" in (validate(dict(conv, tools=[TOOL])) or "")
