"""Micro-compaction, summary compaction (auto and /compact) and identity re-injection."""

from __future__ import annotations

import random
import threading

import pytest
from support.agent import WAIT, assert_requests_valid, make_agent, results_of

from agent_cli.agent import AgentSettings, validate
from agent_cli.agent.compaction import choose_cut, compacted, micro_compact, older_part
from agent_cli.errors import Overloaded, UserError
from agent_cli.events import AgentError, Compacted
from agent_cli.models.base import Message, TextBlock, ToolResultBlock, ToolUseBlock, Usage
from agent_cli.models.scripted import Call, Reply, ScriptedModel
from agent_cli.prompts import load_prompt

SMALL = Usage(input_tokens=10, output_tokens=1)
HUGE = Usage(input_tokens=150_000, output_tokens=10)  # past the default 100k threshold


def tool_rounds(n: int, tool: str = "echo") -> list[Reply]:
    args = {"text": "x"} if tool == "echo" else {}
    return [Reply(f"step {i}", [Call(tool, args)], usage=SMALL) for i in range(n)]


def is_summary_request(request) -> bool:
    return request.system == load_prompt("compact")


def test_old_big_tool_outputs_are_elided_recent_ones_kept(workdir):
    model = ScriptedModel({"alice": [*tool_rounds(3, "big"), Reply("done")]})
    settings = AgentSettings(keep_recent_turns=2, micro_compact_min_chars=1000)
    agent, _ = make_agent(workdir, model, settings=settings)

    agent.run_turn("look at big outputs")

    last = model.requests[-1].messages
    contents = [r.content for m in last for r in results_of(m)]
    assert contents[0] == "[tool output of 5000 chars elided; it was seen]"
    assert contents[1:] == ["x" * 5000, "x" * 5000]
    # what the model was sent earlier is not rewritten after the fact
    assert results_of(model.requests[1].messages[-1])[0].content == "x" * 5000
    assert_requests_valid(model)


def test_auto_compaction_summarizes_and_reinjects_identity(workdir):
    model = ScriptedModel(
        {
            "alice": [
                *tool_rounds(4),
                Reply("first job done", usage=HUGE),
                Reply("Goal: echo things. Task #3 held, claim_token abc."),  # the summary
                Reply("continuing"),
            ]
        }
    )
    settings = AgentSettings(keep_recent_turns=2)
    agent, rec = make_agent(
        workdir, model, settings=settings, extra_identity=lambda: "You hold task #3."
    )
    agent.run_turn("echo four times")
    assert rec.of(Compacted) == []
    n_before = len(model.requests)

    agent.run_turn("next job")

    summary_req, next_req = model.requests[n_before:]
    assert is_summary_request(summary_req) and summary_req.tools == []
    assert "[assistant called echo]" in summary_req.messages[0].text()
    first = next_req.messages[0]
    assert first.content[0].text == (
        f"<identity>You are 'alice', role: tester, team: default, workdir: {workdir}. "
        "You hold task #3.</identity>"
    )
    assert "<summary>\nGoal: echo things. Task #3 held, claim_token abc.\n</summary>" in (
        first.text()
    )
    assert next_req.messages[-1].text() == "next job"
    assert len(next_req.messages) < len(model.requests[n_before - 1].messages)
    [event] = rec.of(Compacted)
    assert event.before_tokens >= 150_000 and event.after_tokens < 1000
    model.assert_used_up()
    assert_requests_valid(model)


def test_manual_compact_then_the_next_request_opens_with_identity(workdir):
    model = ScriptedModel(
        {"alice": [*tool_rounds(3), Reply("ok"), Reply("the summary"), Reply("hi again")]}
    )
    agent, _ = make_agent(workdir, model, settings=AgentSettings(keep_recent_turns=1))
    agent.run_turn("do three things")

    assert agent.compact() is True
    agent.run_turn("where were we?")

    opening = model.requests[-1].messages[0].content[0]
    assert isinstance(opening, TextBlock) and opening.text.startswith("<identity>You are 'alice'")
    assert "<summary>\nthe summary\n</summary>" in model.requests[-1].messages[0].text()
    assert_requests_valid(model)


def test_compact_with_nothing_old_enough_does_nothing(workdir):
    model = ScriptedModel({"alice": [Reply("hello")]})
    agent, rec = make_agent(workdir, model)
    agent.run_turn("hi")

    assert agent.compact() is False
    assert len(model.requests) == 1 and rec.of(Compacted) == []


def test_compact_refuses_while_a_turn_runs(workdir):
    entered, release = threading.Event(), threading.Event()

    def slow(request):
        entered.set()
        release.wait(WAIT)
        return Reply("done")

    model = ScriptedModel({"alice": [slow]})
    agent, _ = make_agent(workdir, model)
    worker = threading.Thread(target=agent.run_turn, args=("work",))
    worker.start()
    assert entered.wait(WAIT)
    try:
        with pytest.raises(UserError, match="running a turn"):
            agent.compact()
    finally:
        release.set()
        worker.join(WAIT)
    assert agent.conversation[-1].text() == "done"


def test_failed_summary_is_reported_once_and_the_turn_goes_on(workdir):
    model = ScriptedModel(
        {
            "alice": [
                *tool_rounds(2),
                Reply("ok", usage=SMALL),
                Reply("", [Call("echo", {"text": "y"})], usage=HUGE),
                Overloaded("busy"),  # the summary request fails
                Reply("", [Call("echo", {"text": "z"})], usage=HUGE),  # no second attempt
                Reply("still here", usage=SMALL),
            ]
        }
    )
    agent, rec = make_agent(workdir, model, settings=AgentSettings(keep_recent_turns=1))
    agent.run_turn("warm up")

    result = agent.run_turn("more")

    assert (result.stop_reason, result.text) == ("end_turn", "still here")
    [err] = rec.of(AgentError)
    assert err.error_kind == "overloaded" and "compaction failed" in err.message
    assert rec.of(Compacted) == []
    model.assert_used_up()
    assert_requests_valid(model)


# -- property: any cut keeps tool pairs intact and roles alternating -------------------------


def random_conversation(rng: random.Random) -> list[Message]:
    messages = [Message(role="user", content=[TextBlock(text="start")])]
    pending: list[str] = []
    for i in range(rng.randint(1, 14)):
        uses = [
            ToolUseBlock(id=f"t{i}_{k}", name="echo", input={"k": k})
            for k in range(rng.choice([0, 0, 1, 2, 3]))
        ]
        content = ([TextBlock(text=f"a{i}")] if rng.random() < 0.7 or not uses else []) + uses
        messages.append(Message(role="assistant", content=content))
        pending = [u.id for u in uses]
        if pending:
            blocks = [
                ToolResultBlock(tool_use_id=t, content="r" * rng.randint(1, 3000)) for t in pending
            ]
            if rng.random() < 0.3:
                blocks.append(TextBlock(text="<inbox>note</inbox>"))
        else:
            blocks = [TextBlock(text=f"user {i}")]
        messages.append(Message(role="user", content=blocks))
    return messages


@pytest.mark.parametrize("seed", range(60))
def test_any_compaction_cut_yields_a_valid_conversation(seed):
    rng = random.Random(seed)
    messages = random_conversation(rng)
    assert validate(messages) == []
    keep = rng.randint(1, 6)

    cut = choose_cut(messages, keep)
    if cut is None:
        return
    after = compacted(messages, cut, "summary")
    assert validate(after) == [], (seed, cut)
    assert after[1:] == messages[cut:]  # the recent part is kept word for word
    assert older_part(messages, cut)  # something was actually summarized
    micro = list(after)
    micro_compact(micro, keep, 100)
    assert validate(micro) == []
    assert [m.role for m in micro] == [m.role for m in after]
