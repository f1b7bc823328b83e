"""Hostile text never crashes a run: tool input nested 200,000 deep is an error result for
that call (the turn goes on), and a lone surrogate in a model's text or a tool's input is
stored in the transcript and read back as the same text."""

from __future__ import annotations

from collections.abc import Iterator

import anthropic
import pytest
from support.agent import Probe, make_agent
from support.cli import run_scripted
from support.stub_server import STUB_MODEL, StubServer

from agent_cli.agent.transcript import load_conversation
from agent_cli.models.anthropic import AnthropicModel
from agent_cli.models.reply import Call, Reply
from agent_cli.models.scripted import ScriptedModel


def nested(depth: int) -> str:
    return '{"text": ' + "[" * depth + "]" * depth + "}"


def assert_deep_call_refused_and_turn_went_on(agent, probe: Probe) -> None:
    result = agent.run_turn("go")
    assert (result.stop_reason, result.text) == ("end_turn", "after")
    assert probe.ran == ["echo:a"]  # the next call of the same response still ran
    answers = agent.conversation[-2].content
    assert answers[0].is_error and "nested too deeply" in answers[0].content
    assert not answers[1].is_error


def test_tool_input_nested_200000_deep_is_an_error_result(workdir) -> None:
    probe = Probe()
    model = ScriptedModel({"alice": [
        Reply("", [Call("echo", nested(200_000)), Call("echo", {"text": "a"})]),
        Reply("after"),
    ]})
    agent, _ = make_agent(workdir, model, probe=probe)
    assert_deep_call_refused_and_turn_went_on(agent, probe)


@pytest.fixture
def stub() -> Iterator[StubServer]:
    with StubServer() as server:
        yield server


def test_the_real_adapter_hands_deep_input_over_as_an_error_result(stub, workdir) -> None:
    """Through the SDK's stream (20,000 deep: well past the parser's limit, and fast to send
    in the stub's 7-character deltas)."""
    probe = Probe()
    stub.push(Reply("", [Call("echo", nested(20_000)), Call("echo", {"text": "a"})]),
              Reply("after"))
    client = anthropic.Anthropic(base_url=stub.url, api_key="test", max_retries=0)
    agent, _ = make_agent(workdir, AnthropicModel(STUB_MODEL, client=client), probe=probe)
    assert_deep_call_refused_and_turn_went_on(agent, probe)
    assert stub.rejections == []


def test_a_lone_surrogate_is_stored_and_read_back(workdir) -> None:
    text = "half a pair: \ud800 and \udfff alone"
    probe = Probe()
    model = ScriptedModel({"alice": [Reply(text, [Call("echo", {"text": text})]),
                                     Reply("done " + text)]})
    agent, _ = make_agent(workdir, model, probe=probe)
    assert agent.run_turn("go " + text).text == "done " + text
    assert probe.ran == ["echo:" + text]
    transcript = next((workdir / ".team" / "transcripts").rglob("alice.jsonl"))
    transcript.read_bytes().decode("utf-8")  # valid UTF-8 on disk
    messages, problems = load_conversation(transcript)
    assert problems == []
    assert [m.model_dump() for m in messages] == [
        m.model_dump() for m in agent.conversation]


def test_a_headless_run_with_lone_surrogates_ends_without_a_traceback(workdir) -> None:
    bad = "x\ud800y"
    script = {"lead": [
        {"text": "thinking " + bad, "tool_calls": [
            {"name": "create_task", "input": {"subject": "s" + bad}},
            {"name": "write_file", "input": {"path": "f" + bad, "content": bad}},
            {"name": "grep", "input": {"pattern": bad}}]},
        {"text": "done " + bad}]}
    proc = run_scripted(workdir, script, "go")
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 0, proc.stderr
    assert "done x\\ud800y" in proc.stdout
    audit = (workdir / ".team" / "audit.jsonl").read_bytes().decode("utf-8")
    assert "\\ud800" in audit  # the exact input, as a JSON escape
