"""The agent loop driving the real Anthropic adapter (real SDK) against the wire-level stub.

The stub validates every request the way the API does; our loop must never be rejected,
across tool rounds, parallel calls, bad inputs, a mid-stream failure, an interrupt and a
compaction.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import anthropic
import pytest
from support.agent import WAIT, Probe, make_agent
from support.stub_server import STUB_MODEL, MidStream, Reply, StubServer, ToolUse

from agent_cli.agent import AgentSettings
from agent_cli.models.anthropic import AnthropicModel


@pytest.fixture
def stub() -> Iterator[StubServer]:
    with StubServer() as server:
        yield server


def adapter(stub: StubServer) -> AnthropicModel:
    client = anthropic.Anthropic(base_url=stub.url, api_key="test", max_retries=0)
    return AnthropicModel(STUB_MODEL, client=client)


def test_multi_round_tool_conversation_is_never_rejected(stub, workdir):
    probe = Probe()
    stub.push(
        Reply("Looking.", [ToolUse("echo", {"text": "a"}), ToolUse("echo", {"text": "b"})]),
        Reply("", [ToolUse("echo", {}), ToolUse("boom"), ToolUse("nope"), ToolUse("echo", "{bad")]),
        Reply("", [ToolUse("idle")]),
        Reply("Round two.", [ToolUse("echo", {"text": "c"})]),
        MidStream("error", text="half an answ"),  # overloaded mid-stream: sent again
        Reply("Recovered."),
        Reply("Third."),
    )
    agent, _ = make_agent(workdir, adapter(stub), probe=probe)

    first = agent.run_turn("start")
    second = agent.run_turn(["continue", "<inbox>bob: hello</inbox>"])
    third = agent.run_turn("try again")

    assert first.stop_reason == "idle"
    assert (second.stop_reason, second.text) == ("end_turn", "Recovered.")
    assert stub.requests[4] == stub.requests[5]  # the same request again after the failure
    assert (third.stop_reason, third.text) == ("end_turn", "Third.")
    assert probe.ran == ["echo:a", "echo:b", "echo:c"]
    bad_json = stub.requests[2]["messages"][-1]["content"][-1]
    assert bad_json["is_error"] and "not valid JSON" in bad_json["content"]
    assert len(stub.requests) == 7
    assert stub.rejections == []


def test_interrupting_a_stalled_stream_keeps_the_api_happy(stub, workdir):
    stub.push(
        Reply("", [ToolUse("echo", {"text": "x"})]),
        MidStream("stall", text="thinking about "),
        Reply("Starting over."),
    )
    agent, _ = make_agent(workdir, adapter(stub))
    outcome = {}
    worker = threading.Thread(target=lambda: outcome.update(r=agent.run_turn("go")))
    worker.start()
    assert stub.wait_for_requests(2, WAIT)
    agent.interrupt()
    worker.join(WAIT)
    stub.release_stalls()

    assert outcome["r"].stop_reason == "interrupted"
    assert agent.run_turn("never mind").text == "Starting over."
    assert stub.rejections == []


def test_compaction_through_the_adapter_is_accepted(stub, workdir):
    stub.push(
        *[Reply(f"step {i}", [ToolUse("big")]) for i in range(3)],
        Reply("done"),
        Reply("Summary: three big outputs read."),
        Reply("Still me."),
    )
    settings = AgentSettings(keep_recent_turns=1, micro_compact_min_chars=1000)
    agent, _ = make_agent(workdir, adapter(stub), settings=settings)
    agent.run_turn("read big things")

    assert agent.compact()
    assert agent.run_turn("who are you?").text == "Still me."

    last = stub.requests[-1]["messages"][0]["content"][0]["text"]
    assert last.startswith("<identity>You are 'alice'")
    assert stub.rejections == []
