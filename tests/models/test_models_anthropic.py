"""The Anthropic adapter through the real SDK against the wire-level stub (no network)."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import anthropic
import pytest
from support.stub_server import Fault, MidStream, Reply, StubServer, ToolUse

from agent_cli import errors
from agent_cli.models.anthropic import AnthropicModel
from agent_cli.models.base import (
    INVALID_INPUT_KEY,
    Message,
    ModelRequest,
    ResponseDone,
    TextBlock,
    TextDelta,
    ToolCall,
    ToolResultBlock,
    ToolSpec,
    collect,
)

TOOLS = [
    ToolSpec(
        name="read_file",
        description="Read a file",
        input_schema={"type": "object", "properties": {"path": {"type": "string"}}},
    ),
    ToolSpec(name="glob", description="Find files", input_schema={"type": "object"}),
]


@pytest.fixture
def stub() -> Iterator[StubServer]:
    with StubServer() as server:
        yield server
        assert server.rejections == [], "the adapter sent a request the API would reject"


def model_for(stub: StubServer, max_retries: int = 2) -> AnthropicModel:
    client = anthropic.Anthropic(base_url=stub.url, api_key="test", max_retries=max_retries)
    return AnthropicModel("claude-stub-1", client=client)


def request(text: str = "hi", tools: list[ToolSpec] | None = None) -> ModelRequest:
    return ModelRequest(
        agent="lead",
        system="You are a test.",
        messages=[Message(role="user", content=[TextBlock(text=text)])],
        tools=TOOLS if tools is None else tools,
        max_tokens=512,
    )


def test_streams_text_deltas_and_the_final_message(stub: StubServer) -> None:
    stub.push(Reply("Hello there, this streams in pieces."))
    events = list(model_for(stub).stream(request()))
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(deltas) > 1
    assert "".join(deltas) == "Hello there, this streams in pieces."
    done = events[-1]
    assert isinstance(done, ResponseDone)
    assert done.stop_reason == "end_turn" and done.truncated_tool is None
    assert done.message.text() == "Hello there, this streams in pieces."


def test_several_tool_calls_in_one_response(stub: StubServer) -> None:
    stub.push(
        Reply(
            "Looking.",
            [ToolUse("read_file", {"path": "a.txt"}), ToolUse("glob", {"pattern": "**/*.py"})],
        )
    )
    events = list(model_for(stub).stream(request()))
    calls = [e.block for e in events if isinstance(e, ToolCall)]
    assert [(c.name, c.input) for c in calls] == [
        ("read_file", {"path": "a.txt"}),
        ("glob", {"pattern": "**/*.py"}),
    ]
    done = events[-1]
    assert isinstance(done, ResponseDone) and done.stop_reason == "tool_use"
    assert done.message.tool_uses() == calls
    # Tool calls are announced before the response ends.
    assert events.index(next(e for e in events if isinstance(e, ToolCall))) < len(events) - 1


def test_tool_round_trip_sends_tool_results_the_api_accepts(stub: StubServer) -> None:
    stub.push(Reply(tool_calls=[ToolUse("read_file", {"path": "a"}), ToolUse("glob", {})]))
    stub.push(Reply("Both done."))
    model = model_for(stub)
    req = request()
    first = collect(model.stream(req))
    results = [
        ToolResultBlock(tool_use_id=b.id, content=f"result of {b.name}", is_error=i == 1)
        for i, b in enumerate(first.message.tool_uses())
    ]
    req.messages += [first.message, Message(role="user", content=results)]
    second = collect(model.stream(req))
    assert second.message.text() == "Both done."
    sent = stub.requests[1]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert [b["tool_use_id"] for b in sent[2]["content"]] == [
        b.id for b in first.message.tool_uses()
    ]
    assert sent[2]["content"][1]["is_error"] is True
    assert "is_error" not in sent[2]["content"][0]


def test_prompt_caching_marks_system_and_last_tool(stub: StubServer) -> None:
    stub.push(Reply("ok"))
    collect(model_for(stub).stream(request()))
    body = stub.requests[0]
    assert body["system"] == [
        {"type": "text", "text": "You are a test.", "cache_control": {"type": "ephemeral"}}
    ]
    assert "cache_control" not in body["tools"][0]
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert body["stream"] is True and body["max_tokens"] == 512


def test_usage_includes_cache_tokens(stub: StubServer) -> None:
    usage = {
        "input_tokens": 12,
        "output_tokens": 34,
        "cache_read_input_tokens": 1000,
        "cache_creation_input_tokens": 56,
    }
    stub.push(Reply("cached", usage=usage))
    done = collect(model_for(stub).stream(request()))
    assert done.usage.model_dump(include=set(usage)) == usage
    assert done.usage.total == 1102


@pytest.mark.parametrize(
    "stop", ["end_turn", "max_tokens", "pause_turn", "refusal", "stop_sequence"]
)
def test_each_stop_reason_is_reported(stub: StubServer, stop: str) -> None:
    stub.push(Reply("some text", stop_reason=stop))
    done = collect(model_for(stub).stream(request()))
    assert done.stop_reason == stop
    assert done.message.text() == "some text"


def test_overloaded_529_then_success_is_retried_by_the_sdk(stub: StubServer) -> None:
    stub.push(Fault.overloaded(), Reply("after retry"))
    done = collect(model_for(stub).stream(request()))
    assert done.message.text() == "after retry"
    assert len(stub.requests) == 2


def test_rate_limited_429_with_retry_after_then_success(stub: StubServer) -> None:
    stub.push(Fault.rate_limited(retry_after="0.01"), Reply("after wait"))
    done = collect(model_for(stub).stream(request()))
    assert done.message.text() == "after wait"
    assert len(stub.requests) == 2


def test_rate_limit_exhausted_is_rate_limited(stub: StubServer) -> None:
    stub.push(Fault.rate_limited(), Fault.rate_limited())
    with pytest.raises(errors.RateLimited, match="429"):
        list(model_for(stub, max_retries=1).stream(request()))


def test_500_until_retries_run_out_is_overloaded(stub: StubServer) -> None:
    stub.push(Fault.server_error(), Fault.server_error(), Fault.server_error())
    with pytest.raises(errors.Overloaded, match="HTTP 500") as info:
        list(model_for(stub, max_retries=2).stream(request()))
    assert info.value.retryable
    assert len(stub.requests) == 3


def test_401_is_auth_failed_without_retry() -> None:
    with StubServer(api_key="the-right-key") as stub:
        client = anthropic.Anthropic(base_url=stub.url, api_key="wrong", max_retries=2)
        with pytest.raises(errors.AuthFailed, match="401"):
            list(AnthropicModel("claude-stub-1", client=client).stream(request()))
        assert len(stub.requests) == 1


def test_a_request_the_api_refuses_is_bad_request() -> None:
    with StubServer() as stub:
        bad = request()
        bad.messages.append(Message(role="user", content=[TextBlock(text="again")]))
        with pytest.raises(errors.BadRequest, match="roles must alternate"):
            list(model_for(stub).stream(bad))
        assert len(stub.requests) == 1 and len(stub.rejections) == 1


@pytest.mark.parametrize(
    ("error_type", "expected"),
    [
        ("overloaded_error", errors.Overloaded),
        ("rate_limit_error", errors.RateLimited),
        ("api_error", errors.Overloaded),
        ("invalid_request_error", errors.BadRequest),
    ],
)
def test_error_event_mid_stream_is_typed(
    stub: StubServer, error_type: str, expected: type[errors.ModelError]
) -> None:
    stub.push(MidStream("error", text="half an answer", error_type=error_type))
    seen: list[str] = []
    with pytest.raises(expected, match="mid-stream"):
        for ev in model_for(stub).stream(request()):
            if isinstance(ev, TextDelta):
                seen.append(ev.text)
    assert "".join(seen) == "half an answer"  # what streamed before the error was shown


def test_connection_reset_mid_stream_is_connection_failed(stub: StubServer) -> None:
    stub.push(MidStream("reset"))
    with pytest.raises(errors.ConnectionFailed) as info:
        list(model_for(stub).stream(request()))
    assert info.value.retryable


def test_unreachable_endpoint_is_connection_failed() -> None:
    with StubServer() as stub:
        url = stub.url
    client = anthropic.Anthropic(base_url=url, api_key="test", max_retries=0)
    with pytest.raises(errors.ConnectionFailed, match="cannot reach"):
        list(AnthropicModel("claude-stub-1", client=client).stream(request()))


def test_max_tokens_inside_a_tool_call_is_reported_not_dropped_silently(stub: StubServer) -> None:
    stub.push(
        Reply(
            "Writing two files.",
            [
                ToolUse("read_file", {"path": "complete.txt"}),
                ToolUse("write_file", '{"path": "b.txt", "content": "a long te'),
            ],
            stop_reason="max_tokens",
        )
    )
    events = list(model_for(stub).stream(request()))
    done = events[-1]
    assert isinstance(done, ResponseDone)
    assert done.stop_reason == "max_tokens"
    assert done.truncated_tool == "write_file"
    # The complete call is kept; the cut one is neither emitted nor in the message.
    assert [e.block.name for e in events if isinstance(e, ToolCall)] == ["read_file"]
    assert [b.name for b in done.message.tool_uses()] == ["read_file"]


def test_invalid_tool_input_json_becomes_a_marked_call(stub: StubServer) -> None:
    stub.push(Reply(tool_calls=[ToolUse("read_file", '{"path": oops}'), ToolUse("glob", {})]))
    stub.push(Reply("fixed"))
    model = model_for(stub)
    req = request()
    events = list(model.stream(req))
    calls = {e.block.name: e.block for e in events if isinstance(e, ToolCall)}
    assert calls["read_file"].input == {INVALID_INPUT_KEY: '{"path": oops}'}
    assert calls["glob"].input == {}
    done = events[-1]
    assert isinstance(done, ResponseDone) and done.stop_reason == "tool_use"
    # The marked call can be answered like any other; the API accepts the conversation.
    results = [
        ToolResultBlock(tool_use_id=b.id, content="invalid JSON input", is_error=True)
        for b in done.message.tool_uses()
    ]
    req.messages += [done.message, Message(role="user", content=results)]
    assert collect(model.stream(req)).message.text() == "fixed"


def test_a_tool_the_request_did_not_offer_is_passed_through(stub: StubServer) -> None:
    stub.push(Reply(tool_calls=[ToolUse("launch_rockets", {"count": 3})]))
    done = collect(model_for(stub).stream(request()))
    assert done.message.tool_uses()[0].name == "launch_rockets"  # the loop refuses it


def test_cancel_from_another_thread_closes_a_stalled_stream(stub: StubServer) -> None:
    stub.push(MidStream("stall", text="thinking"))
    cancel = threading.Event()
    first_text = threading.Event()
    outcome: list[BaseException] = []

    def consume() -> None:
        try:
            for ev in model_for(stub).stream(request(), cancel):
                if isinstance(ev, TextDelta):
                    first_text.set()
        except BaseException as exc:  # noqa: BLE001 - recorded for the assertion
            outcome.append(exc)

    worker = threading.Thread(target=consume)
    worker.start()
    assert first_text.wait(timeout=10)
    cancel.set()
    worker.join(timeout=10)
    assert not worker.is_alive(), "the stream did not stop on cancel"
    assert len(outcome) == 1 and isinstance(outcome[0], errors.Interrupted)


def test_cancel_set_before_the_call_sends_nothing(stub: StubServer) -> None:
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(errors.Interrupted):
        list(model_for(stub).stream(request(), cancel))
    assert stub.requests == []


def test_many_threads_share_one_model(stub: StubServer) -> None:
    stub.default = Reply("shared")
    model = model_for(stub)
    texts: list[str] = []
    lock = threading.Lock()

    def worker() -> None:
        text = collect(model.stream(request())).message.text()
        with lock:
            texts.append(text)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=20)
    assert texts == ["shared"] * 8
    assert len(stub.requests) == 8


def test_credentials_and_endpoint_come_from_the_environment(
    stub: StubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", stub.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "env-key")
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    stub.push(Reply("from env"))
    assert collect(AnthropicModel("claude-stub-1").stream(request())).message.text() == "from env"
    sent = stub.headers[0]
    assert "env-key" in (sent.get("x-api-key") or sent.get("authorization", ""))


def test_base_url_alone_works_for_a_local_server(
    stub: StubServer, monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("ANTHROPIC_BASE_URL", stub.url)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    stub.push(Reply("local"))
    assert collect(AnthropicModel("qwen2.5:7b").stream(request())).message.text() == "local"
    assert stub.requests[0]["model"] == "qwen2.5:7b"


def test_an_interrupt_does_not_wait_for_a_server_that_holds_its_headers_back() -> None:
    arrived, release = threading.Event(), threading.Event()

    def slow(body):
        arrived.set()
        release.wait(60)
        return Reply("too late")

    with StubServer(responder=slow) as stub:
        cancel = threading.Event()
        outcome: dict[str, object] = {}

        def run() -> None:
            try:
                collect(model_for(stub, max_retries=0).stream(request(), cancel))
            except errors.Interrupted as exc:
                outcome["raised"] = exc

        worker = threading.Thread(target=run)
        worker.start()
        assert arrived.wait(30)
        cancel.set()
        worker.join(30)
        finished_before_the_server_answered = not worker.is_alive()
        release.set()
        worker.join(30)
    assert finished_before_the_server_answered
    assert isinstance(outcome.get("raised"), errors.Interrupted)
