"""The scripted model: routing, streaming shape, exhaustion, exceptions, callables, files."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from agent_cli import errors
from agent_cli.models.base import (
    Message,
    ModelRequest,
    ResponseDone,
    TextBlock,
    TextDelta,
    ToolCall,
    Usage,
    collect,
)
from agent_cli.models.scripted import Call, Reply, ScriptedModel


def request(agent: str = "lead", text: str = "hello") -> ModelRequest:
    return ModelRequest(
        agent=agent,
        system="sys",
        messages=[Message(role="user", content=[TextBlock(text=text)])],
    )


def test_reply_streams_text_then_tool_calls_then_done() -> None:
    model = ScriptedModel(
        {"lead": [Reply("line one\nline two", [Call("read_file", {"path": "a"}), Call("glob")])]}
    )
    events = list(model.stream(request()))
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    calls = [e.block for e in events if isinstance(e, ToolCall)]
    done = events[-1]
    assert text == "line one\nline two"
    assert [c.name for c in calls] == ["read_file", "glob"]
    assert calls[0].input == {"path": "a"}
    assert isinstance(done, ResponseDone) and done.stop_reason == "tool_use"
    # The assistant message carries the text block and the same tool_use blocks, in order.
    assert [b.type for b in done.message.content] == ["text", "tool_use", "tool_use"]
    assert done.message.tool_uses() == calls
    assert len({c.id for c in calls}) == 2 and all(c.id.startswith("toolu_") for c in calls)


def test_empty_text_gives_no_text_block_and_end_turn_default() -> None:
    model = ScriptedModel({"lead": [Reply(tool_calls=[Call("idle")]), Reply("bye")]})
    first = collect(model.stream(request()))
    assert [b.type for b in first.message.content] == ["tool_use"]
    second = collect(model.stream(request()))
    assert second.stop_reason == "end_turn"
    assert second.message.text() == "bye"
    assert second.usage.input_tokens > 0  # estimated when the script gives none


def test_explicit_stop_reason_usage_and_id_are_kept() -> None:
    usage = Usage(input_tokens=7, output_tokens=3, cache_read_input_tokens=5)
    model = ScriptedModel(
        {
            "lead": [
                Reply("cut", [Call("x", id="toolu_mine")], stop_reason="max_tokens", usage=usage)
            ]
        }
    )
    done = collect(model.stream(request()))
    assert done.stop_reason == "max_tokens"
    assert done.usage == usage
    assert done.message.tool_uses()[0].id == "toolu_mine"


def test_routing_exact_name_then_star() -> None:
    model = ScriptedModel({"alice": [Reply("from alice")], "*": [Reply("from star")]})
    assert collect(model.stream(request("bob"))).message.text() == "from star"
    assert collect(model.stream(request("alice"))).message.text() == "from alice"
    # alice has her own queue: once it is empty she does NOT fall through to "*".
    with pytest.raises(errors.ScriptExhausted, match="'alice'"):
        list(model.stream(request("alice")))


def test_exhaustion_is_loud_and_names_the_agent() -> None:
    model = ScriptedModel({"lead": [Reply("one")]})
    collect(model.stream(request()))
    with pytest.raises(errors.ScriptExhausted) as info:
        list(model.stream(request(text="second question")))
    assert "'lead'" in str(info.value) and "second question" in str(info.value)
    with pytest.raises(errors.ScriptExhausted, match="'carol'"):
        list(model.stream(request("carol")))


def test_assert_used_up_lists_leftovers() -> None:
    model = ScriptedModel({"lead": [Reply("a"), Reply("b")], "bob": [Reply("c")]})
    collect(model.stream(request()))
    with pytest.raises(AssertionError) as info:
        model.assert_used_up()
    assert "'lead': 1" in str(info.value) and "'bob': 1" in str(info.value)
    collect(model.stream(request()))
    collect(model.stream(request("bob")))
    model.assert_used_up()


def test_exception_entry_is_raised_and_consumed() -> None:
    model = ScriptedModel({"lead": [errors.Overloaded("busy"), Reply("recovered")]})
    with pytest.raises(errors.Overloaded, match="busy"):
        list(model.stream(request()))
    assert collect(model.stream(request())).message.text() == "recovered"
    model.assert_used_up()


def test_callable_entry_sees_the_request() -> None:
    def answer(req: ModelRequest) -> Reply:
        return Reply(f"you said {req.messages[-1].text()}")

    model = ScriptedModel({"lead": [answer, lambda req: "plain string"]})
    assert collect(model.stream(request(text="ping"))).message.text() == "you said ping"
    assert collect(model.stream(request())).message.text() == "plain string"


def test_requests_are_recorded_as_copies() -> None:
    model = ScriptedModel({"*": [Reply("x"), Reply("y")]})
    req = request("alice", "first")
    collect(model.stream(req))
    req.messages[0].content[0].text = "mutated later"
    collect(model.stream(request("bob", "second")))
    assert [r.messages[0].text() for r in model.requests] == ["first", "second"]
    assert [r.agent for r in model.requests_for("bob")] == ["bob"]


def test_cancel_set_before_or_during_the_stream_interrupts() -> None:
    model = ScriptedModel({"lead": [Reply("a\nb\nc"), Reply("next")]})
    cancel = threading.Event()
    stream = model.stream(request(), cancel)
    assert next(stream) == TextDelta("a\n")
    cancel.set()
    with pytest.raises(errors.Interrupted):
        list(stream)
    with pytest.raises(errors.Interrupted):
        list(model.stream(request(), cancel))
    # The cancelled-before-start call consumed nothing.
    assert model.remaining() == {"lead": 1}


def test_many_threads_each_get_exactly_one_entry() -> None:
    n = 40
    model = ScriptedModel({"*": [Reply(f"r{i}", [Call("t")]) for i in range(n)]})
    results: list[str] = []
    ids: list[str] = []
    lock = threading.Lock()
    start = threading.Barrier(n)

    def worker(i: int) -> None:
        start.wait(timeout=10)
        done = collect(model.stream(request(f"agent{i}")))
        with lock:
            results.append(done.message.text())
            ids.extend(b.id for b in done.message.tool_uses())

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=10)
    assert sorted(results) == sorted(f"r{i}" for i in range(n))
    assert len(set(ids)) == n
    assert len(model.requests) == n
    model.assert_used_up()


def test_from_file_reads_the_documented_format(tmp_path: Path) -> None:
    path = tmp_path / "script.json"
    path.write_text(
        json.dumps(
            {
                "lead": [
                    {
                        "text": "Planning.",
                        "tool_calls": [{"name": "create_task", "input": {"subject": "s"}}],
                    },
                    {"error": "overloaded", "message": "try later"},
                    {"text": "done", "usage": {"input_tokens": 9, "output_tokens": 2}},
                ],
                "*": [{"error": "rate_limited"}],
            }
        )
    )
    model = ScriptedModel.from_file(path)
    first = collect(model.stream(request()))
    assert first.message.tool_uses()[0].input == {"subject": "s"}
    with pytest.raises(errors.Overloaded, match="try later"):
        list(model.stream(request()))
    assert collect(model.stream(request())).usage.input_tokens == 9
    with pytest.raises(errors.RateLimited):
        list(model.stream(request("zed")))
    model.assert_used_up()
    assert str(path) in model.name


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not a readable JSON script"),
        ('["a"]', "expected an object"),
        ('{"lead": {"text": "x"}}', "must map to a list"),
        ('{"lead": [{"txt": "x"}]}', "unknown key(s) txt"),
        ('{"lead": [{"error": "boom"}]}', "unknown error 'boom'"),
        ('{"lead": [{"tool_calls": [{"input": {}}]}]}', "needs a string 'name'"),
        ('{"lead": [{"tool_calls": [{"name": "x", "input": [1]}]}]}', "'input' must be"),
    ],
)
def test_from_file_rejects_bad_scripts_naming_the_place(
    tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(errors.UserError) as info:
        ScriptedModel.from_file(path)
    assert message in str(info.value)
    assert str(path) in str(info.value)


def test_from_file_missing_file(tmp_path: Path) -> None:
    with pytest.raises(errors.UserError, match="not found"):
        ScriptedModel.from_file(tmp_path / "nope.json")
