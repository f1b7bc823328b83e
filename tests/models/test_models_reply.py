"""The one reply type and stream path of the offline models (models/reply.py), as the
scripted model, the demo and the wire stub use it."""

from __future__ import annotations

import threading

import pytest

from agent_cli.errors import Interrupted
from agent_cli.models.base import (
    INVALID_INPUT_KEY,
    Message,
    ModelRequest,
    TextBlock,
    TextDelta,
    ToolCall,
    Usage,
    collect,
)
from agent_cli.models.reply import Call, Pacing, Reply, estimate_tokens, play
from agent_cli.models.scripted import ScriptedModel


def request(agent: str = "lead") -> ModelRequest:
    return ModelRequest(agent=agent, system="sys",
                        messages=[Message(role="user", content=[TextBlock(text="hi")])])


def test_typed_pacing_streams_quarters_of_the_words_and_lines_otherwise():
    text = "one two three four five six seven eight"
    assert Pacing(typed=True).pieces(text) == ["one two ", "three four ", "five six ",
                                               "seven eight"]
    assert Pacing().pieces("a\nb") == ["a\n", "b"]


def test_a_str_input_is_raw_json_and_invalid_json_arrives_marked():
    reply = Reply(tool_calls=[Call("glob", '{"pattern": "*"}'), Call("read_file", "{oops")])
    events = list(play(reply, request(), lambda tag: f"id_{tag}x"))
    calls = [e.block for e in events if isinstance(e, ToolCall)]
    assert calls[0].input == {"pattern": "*"}
    assert calls[1].input == {INVALID_INPUT_KEY: "{oops"}


def test_ids_carry_the_replys_tag_and_counts_given_replace_the_estimate():
    model = ScriptedModel({"*": [Reply("x", [Call("idle")], id_tag="p2_",
                                       usage={"cache_read_input_tokens": 7})]})
    done = collect(model.stream(request()))
    assert done.message.tool_uses()[0].id == "toolu_p2_1"
    assert done.usage.cache_read_input_tokens == 7 and done.usage.input_tokens > 0
    assert done.usage.output_tokens == estimate_tokens("x") + 10
    whole = Usage(input_tokens=3)
    assert collect(ScriptedModel({"*": [Reply("x", usage=whole)]}).stream(request())).usage \
        == whole


def test_a_responder_answers_every_request_no_queue_does_and_records_nothing_when_told():
    model = ScriptedModel({"alice": [Reply("queued")]},
                          responder=lambda req: f"for {req.agent}", record=False)
    texts = [collect(model.stream(request(a))).message.text() for a in ("alice", "alice", "bob")]
    assert texts == ["queued", "for alice", "for bob"] and model.requests == []


def test_a_paced_stream_stops_at_the_cancel_between_pieces():
    cancel = threading.Event()
    model = ScriptedModel(responder=lambda req: "a b c d e f g h",
                          pacing=Pacing(pause_s=0.001, typed=True))
    stream = model.stream(request(), cancel)
    assert isinstance(next(stream), TextDelta)
    cancel.set()
    with pytest.raises(Interrupted):
        next(stream)
