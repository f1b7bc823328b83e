"""Extended thinking through the real SDK against the wire stub, made as strict as the API:
thinking blocks go back exactly as received (signature and all) across tool rounds, a resume
and a compaction; max_tokens sits above the budget; a server that refuses thinking gets one
line and the turn goes on without it."""

from __future__ import annotations

from collections.abc import Iterator

import anthropic
import pytest
from support.agent import Probe, make_agent
from support.stub_rules import sign_thinking, validate
from support.stub_server import REDACTED, STUB_MODEL, Fault, Reply, StubServer, ToolUse

from agent_cli.agent import AgentSettings
from agent_cli.events import Notice, ThinkingDone
from agent_cli.models.anthropic import AnthropicModel
from agent_cli.models.base import RedactedThinkingBlock, ThinkingBlock
from agent_cli.models.thinking import Thinking


@pytest.fixture
def stub() -> Iterator[StubServer]:
    with StubServer() as server:
        yield server


def adapter(stub: StubServer) -> AnthropicModel:
    client = anthropic.Anthropic(base_url=stub.url, api_key="test", max_retries=0)
    return AnthropicModel(STUB_MODEL, client=client)


def thinking_on(budget: int = 2048) -> AgentSettings:
    return AgentSettings(thinking=Thinking("enabled", budget))


def assistant_blocks(request: dict, index: int = -1) -> list[dict]:
    return [m for m in request["messages"] if m["role"] == "assistant"][index]["content"]


def test_tool_rounds_send_each_thinking_block_back_unchanged(stub, workdir):
    probe = Probe()
    stub.push(
        Reply("Let me look.", [ToolUse("echo", {"text": "a"})], thinking="First I list."),
        Reply("", [ToolUse("echo", {"text": "b"})], thinking=REDACTED),
        Reply("Done.", thinking="Both ran."),
    )
    agent, rec = make_agent(workdir, adapter(stub), probe=probe, settings=thinking_on())

    result = agent.run_turn("go")

    assert (result.stop_reason, result.text, probe.ran) == ("end_turn", "Done.", ["echo:a",
                                                                                 "echo:b"])
    assert stub.rejections == []
    first, second, third = stub.requests
    assert first["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert first["max_tokens"] > 2048
    assert assistant_blocks(second)[0] == {"type": "thinking", "thinking": "First I list.",
                                           "signature": sign_thinking("First I list.")}
    assert assistant_blocks(third)[0] == {"type": "redacted_thinking",
                                          "data": sign_thinking(REDACTED)}
    kept = agent.conversation[1].content[0]
    assert isinstance(kept, ThinkingBlock) and kept.signature == sign_thinking("First I list.")
    assert isinstance(agent.conversation[3].content[0], RedactedThinkingBlock)
    shown = rec.of(ThinkingDone)
    assert [e.text for e in shown] == ["First I list.", "", "Both ran."]
    assert shown[1].redacted == 1


def test_the_stub_refuses_a_dropped_or_altered_thinking_block():
    sig = sign_thinking("plan")
    body = {
        "model": STUB_MODEL, "max_tokens": 4096,
        "thinking": {"type": "enabled", "budget_tokens": 2048},
        "tools": [{"name": "echo", "input_schema": {"type": "object"}}],
        "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "plan", "signature": sig},
                {"type": "tool_use", "id": "t1", "name": "echo", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                          "content": "ok"}]},
        ],
    }
    assert validate(body) is None
    altered = body["messages"][1]["content"][0]
    altered["thinking"] = "plan B"
    assert "Invalid `signature`" in validate(body)
    del body["messages"][1]["content"][0]
    assert "must start with a thinking block" in validate(body)
    body["messages"][1]["content"].insert(0, {"type": "thinking", "thinking": "plan",
                                              "signature": sig})
    body["max_tokens"] = 2048
    assert "greater than `thinking.budget_tokens`" in validate(body)


def test_a_resumed_conversation_keeps_its_thinking_valid(stub, workdir):
    stub.push(Reply("", [ToolUse("echo", {"text": "a"})], thinking="Step one."),
              Reply("First done.", thinking="ok"))
    agent, _ = make_agent(workdir, adapter(stub), settings=thinking_on())
    agent.run_turn("go")

    stub.push(Reply("", [ToolUse("echo", {"text": "b"})], thinking="Again."),
              Reply("Second done."))
    again, _ = make_agent(workdir, adapter(stub), settings=thinking_on(), resume=True)
    result = again.run_turn("once more")

    assert result.text == "Second done."
    assert stub.rejections == []
    resent = assistant_blocks(stub.requests[2], 0)[0]
    assert resent == {"type": "thinking", "thinking": "Step one.",
                      "signature": sign_thinking("Step one.")}


def test_compaction_never_separates_thinking_from_its_tool_call(stub, workdir):
    stub.push(*[Reply("", [ToolUse("echo", {"text": str(i)})], thinking=f"think {i}")
                for i in range(4)], Reply("Four ran.", thinking="done"))
    settings = AgentSettings(thinking=Thinking("enabled", 2048), keep_recent_turns=2)
    agent, _ = make_agent(workdir, adapter(stub), settings=settings)
    agent.run_turn("go")
    stub.push(Reply("Summary of the work."), Reply("", [ToolUse("echo", {"text": "x"})],
                                                  thinking="after"), Reply("Fine."))

    assert agent.compact()
    assert agent.run_turn("and one more").text == "Fine."
    assert stub.rejections == []
    for message in agent.conversation:
        if message.role == "assistant" and message.tool_uses():
            assert isinstance(message.content[0], ThinkingBlock)


def test_a_server_that_refuses_thinking_gets_one_line_and_the_turn_goes_on(stub, workdir):
    stub.push(Fault(400, "invalid_request_error", "thinking: Extra inputs are not permitted"),
              Reply("Answered without thinking."), Reply("Still fine."))
    agent, rec = make_agent(workdir, adapter(stub), settings=thinking_on())

    result = agent.run_turn("hi")
    later = agent.run_turn("again")

    assert result.text == "Answered without thinking."
    assert later.stop_reason == "end_turn"
    assert "thinking" not in stub.requests[1] and "thinking" not in stub.requests[2]
    lines = [e.text for e in rec.of(Notice) if "extended thinking" in e.text]
    assert len(lines) == 1 and "thinking is off for alice" in lines[0]


def test_with_thinking_off_the_blocks_stay_home(stub, workdir):
    stub.push(Reply("", [ToolUse("echo", {"text": "a"})], thinking="hm"), Reply("One."))
    agent, _ = make_agent(workdir, adapter(stub), settings=thinking_on())
    agent.run_turn("go")
    agent.settings.thinking = None
    stub.push(Reply("Two."))

    assert agent.run_turn("next").text == "Two."
    last = stub.requests[-1]
    assert "thinking" not in last
    assert all(b["type"] != "thinking" for m in last["messages"] for b in m["content"]
               if isinstance(m["content"], list))
    assert stub.rejections == []


def test_a_fixed_budget_claude_4_model_gets_the_interleaving_header_on_the_wire(stub, workdir):
    client = anthropic.Anthropic(base_url=stub.url, api_key="test", max_retries=0)
    stub.push(Reply("Hi.", thinking="hello back"))
    agent, _ = make_agent(workdir, AnthropicModel("claude-sonnet-4-5", client=client),
                          settings=thinking_on())

    assert agent.run_turn("hi").text == "Hi."
    assert stub.headers[-1].get("anthropic-beta") == "interleaved-thinking-2025-05-14"
    assert stub.rejections == []
