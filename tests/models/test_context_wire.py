"""Real token counts through the real SDK against the wire stub: the context window comes from
the endpoint's model information, count_tokens is asked only when a grown conversation may
cross the auto-compaction threshold (never on every request), a real count past the
threshold compacts where the estimate would not have, and a server without the endpoint
is said once per agent."""

from __future__ import annotations

import json
from collections.abc import Iterator

import anthropic
import pytest
from support.agent import Probe, Recorder, make_tools
from support.stub_models import entry
from support.stub_server import STUB_MODEL, Reply, StubServer, ToolUse

from agent_cli.agent import Agent, AgentSettings, Identity
from agent_cli.events import Compacted, EventBus, Notice
from agent_cli.models.anthropic import AnthropicModel

WINDOW = 20_000  # the stub's model: auto-compaction at 16,000 (80%)
THRESHOLD = 16_000
BIG = 48_000  # characters of the big tool's output: about 12,000 tokens by the estimate


def small_window_stub(**kw) -> StubServer:
    return StubServer(models=[entry(STUB_MODEL, WINDOW)], **kw)


@pytest.fixture
def stub() -> Iterator[StubServer]:
    with small_window_stub() as server:
        yield server


def adapter(stub: StubServer) -> AnthropicModel:
    client = anthropic.Anthropic(base_url=stub.url, api_key="test", max_retries=0)
    return AnthropicModel(STUB_MODEL, client=client)


def agent_on(stub: StubServer, workdir, resume: bool = False,
             **settings) -> tuple[Agent, Recorder]:
    bus = EventBus()
    rec = Recorder(bus)
    (workdir / "transcripts").mkdir(exist_ok=True)
    agent = Agent(Identity("alice", "tester", "default", workdir), "You are a test agent.",
                  adapter(stub), make_tools(Probe(), big_chars=BIG), None, bus,
                  transcript_dir=workdir / "transcripts",
                  settings=AgentSettings(max_tokens=1024, **settings), resume=resume)
    return agent, rec


def estimated(notices: list[Notice]) -> list[str]:
    return [n.text for n in notices if "estimated from characters" in n.text]


def test_small_rounds_never_count_and_the_window_is_asked_once(stub, workdir):
    stub.push(*[Reply(f"step {i}", [ToolUse("echo", {"text": "hi"})]) for i in range(4)],
              Reply("done"))
    agent, rec = agent_on(stub, workdir)

    assert agent.run_turn("echo four times").stop_reason == "end_turn"

    assert len(stub.requests) == 5 and stub.counted == [] and stub.rejections == []
    assert stub.gets == [f"/v1/models/{STUB_MODEL}"]
    figure = agent.context.figure()
    assert figure is not None and figure.exact and figure.window == WINDOW
    assert rec.of(Compacted) == [] and estimated(rec.of(Notice)) == []


def test_a_real_count_past_the_share_of_the_window_compacts(workdir):
    with small_window_stub(counter=lambda body: THRESHOLD + 1_000) as stub:
        stub.push(Reply("hi"), Reply("", [ToolUse("big", {})]),
                  Reply("Goal: read the big file."), Reply("done"))
        agent, rec = agent_on(stub, workdir, keep_recent_turns=1)
        agent.run_turn("hello")

        result = agent.run_turn("read the big file")

    assert (result.stop_reason, result.text) == ("end_turn", "done")
    assert stub.rejections == [] and len(stub.counted) == 1
    counted = stub.counted[0]
    assert "max_tokens" not in counted and counted["tools"] and counted["system"]
    assert counted["messages"][-1]["content"][0]["content"] == "x" * BIG
    # the estimate alone said "below": the endpoint's count is what crossed the threshold
    assert len(json.dumps(counted["messages"])) // 4 < THRESHOLD
    assert [(c.before_tokens, c.after_tokens < THRESHOLD) for c in rec.of(Compacted)] == [
        (THRESHOLD + 1_000, True)]
    summary, last = stub.requests[2], stub.requests[3]
    assert "Summarize this conversation" in summary["messages"][0]["content"][0]["text"]
    opening = " ".join(b.get("text", "") for b in last["messages"][0]["content"])
    assert "<summary>\nGoal: read the big file.\n</summary>" in opening
    assert agent.context.figure().exact is True  # the last response's usage again


def test_a_count_below_the_threshold_is_trusted_until_the_next_usage(workdir):
    with small_window_stub(counter=lambda body: 9_000) as stub:
        stub.push(Reply("", [ToolUse("big", {})]), Reply("", [ToolUse("echo", {"text": "a"})]),
                  Reply("done"))
        agent, rec = agent_on(stub, workdir)

        assert agent.run_turn("read the big file, then echo").stop_reason == "end_turn"

    assert len(stub.counted) == 1 and len(stub.requests) == 3  # the small echo: no count
    assert rec.of(Compacted) == [] and stub.rejections == []


def test_a_server_without_count_tokens_is_said_once_and_the_estimate_decides(workdir):
    with small_window_stub(count_tokens=False) as stub:
        stub.push(Reply("", [ToolUse("big", {})]), Reply("ok"),
                  Reply("", [ToolUse("big", {})]), Reply("ok again"))
        agent, rec = agent_on(stub, workdir)
        assert agent.run_turn("read the big file").stop_reason == "end_turn"
        agent.clear()

        assert agent.run_turn("read it once more").stop_reason == "end_turn"

    assert len(stub.counted) == 1  # the one attempt that got the 404; never asked again
    said = estimated(rec.of(Notice))
    assert len(said) == 1 and "not_found" in said[0] and rec.of(Compacted) == []
    figure = agent.context.figure()
    assert figure is not None and figure.window == WINDOW and stub.rejections == []


def test_compact_at_wins_over_the_window(workdir):
    with small_window_stub() as stub:
        stub.push(Reply("hi"), Reply("there"), Reply("Goal: chat."), Reply("done"))
        agent, rec = agent_on(stub, workdir, compact_threshold_tokens=50, keep_recent_turns=1)
        agent.run_turn("hello")
        agent.run_turn("and again")

        agent.run_turn("one more")

    assert len(rec.of(Compacted)) == 1 and stub.rejections == []


def test_a_resumed_conversation_is_counted_once_before_its_first_request(workdir):
    with small_window_stub(counter=lambda body: 9_000) as stub:
        stub.push(Reply("", [ToolUse("big", {})]), Reply("ok"), Reply("resumed"))
        first, _ = agent_on(stub, workdir)
        first.run_turn("read the big file")
        counted_before = len(stub.counted)
        resumed, rec = agent_on(stub, workdir, resume=True)

        assert resumed.run_turn("go on").text == "resumed"

    # no usage covers a restored conversation: the endpoint counts it, once
    assert len(stub.counted) == counted_before + 1
    restored = stub.counted[-1]["messages"]
    assert any(b.get("content") == "x" * BIG for m in restored for b in m["content"])
    assert rec.of(Compacted) == [] and stub.rejections == []
