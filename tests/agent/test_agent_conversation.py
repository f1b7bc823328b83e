"""The conversation's validity rules: validate() finds each breakage, repair() fixes any list;
a refused turn leaves a valid conversation; the suite's strict check fails a test on a repair."""

from __future__ import annotations

import os
import random

import pytest
from support.agent import (
    assert_requests_valid,
    make_agent,
)

from agent_cli.agent import Conversation, repair, validate
from agent_cli.agent.agent import STRICT_ENV
from agent_cli.events import (
    AgentError,
    Notice,
    TurnFinished,
)
from agent_cli.models.base import Message, TextBlock, ToolResultBlock, ToolUseBlock
from agent_cli.models.scripted import Call, Reply, ScriptedModel


def user(*blocks) -> Message:
    return Message(role="user", content=[_b(b) for b in blocks])


def bot(*blocks) -> Message:
    return Message(role="assistant", content=[_b(b) for b in blocks])


def _b(b):
    return TextBlock(text=b) if isinstance(b, str) else b


def use(i: str) -> ToolUseBlock:
    return ToolUseBlock(id=i, name="echo", input={})


def res(i: str) -> ToolResultBlock:
    return ToolResultBlock(tool_use_id=i, content="ok")


@pytest.mark.parametrize(
    ("messages", "problem"),
    [
        ([bot("hi"), user("x")], "first message is not a user message"),
        ([user("a"), user("b")], "two user messages in a row"),
        ([user("a"), bot(use("t1")), user("text only")], "not answered here"),
        ([user("a"), bot("no tools"), user(res("t9"))], "answers no tool_use"),
        ([user("a"), bot(use("t1")), user("note", res("t1"))], "tool_result after text"),
        ([user("  ")], "blank text block"),
        ([Message(role="user", content=[])], "empty content"),
        ([user("a"), bot("prefill")], "prefill"),
        ([user("a"), bot(use("t1"))], "has no tool_result"),
        ([user("a"), bot(use("t1")), user(res("t1"), res("t1"))], "duplicate"),
        ([user("a"), bot(use("t1")), user(res("t1")), bot(use("t1")), user(res("t1"))], "twice"),
    ],
)
def test_validate_names_each_rule_the_api_enforces(messages, problem):
    problems = validate(messages)
    assert any(problem in p for p in problems), problems


def test_a_correct_tool_conversation_is_valid():
    messages = [user("go"), bot("sure", use("a"), use("b")), user(res("a"), res("b"), "more")]
    assert validate(messages) == []


def test_user_content_merges_into_a_trailing_user_turn_with_results_first():
    conv = Conversation([user("go"), bot(use("a"))])
    conv.add_user([res("a")])
    conv.add_user([TextBlock(text="<inbox>bob: hi</inbox>"), TextBlock(text="   ")])
    conv.add_user([TextBlock(text="task #2 claimed")])

    assert len(conv) == 3
    assert [b.type for b in conv.last().content] == ["tool_result", "text", "text"]
    assert validate(conv.messages) == []


def test_repair_answers_orphans_and_drops_strays():
    broken = [
        bot("hello?"),
        user(res("ghost"), "real text"),
        user("again"),
        bot(use("t1")),
        bot("still talking"),
        bot(use("t2")),
    ]
    fixed = repair(broken)

    assert validate(fixed) == []
    texts = [b.text for m in fixed for b in m.content if isinstance(b, TextBlock)]
    assert "real text" in texts and "again" in texts and "still talking" in texts
    answers = {b.tool_use_id: b for m in fixed for b in m.content if isinstance(b, ToolResultBlock)}
    assert set(answers) == {"t1", "t2"}
    assert all(a.is_error and a.content == "interrupted by the user" for a in answers.values())


def random_messages(rng: random.Random) -> list[Message]:
    """Arbitrary, mostly broken, message lists."""
    ids = [f"t{i}" for i in range(5)]
    out = []
    for _ in range(rng.randint(0, 12)):
        role = rng.choice(["user", "assistant"])
        blocks = []
        for _ in range(rng.randint(0, 4)):
            kind = rng.choice(["text", "blank", "use", "result"])
            if kind == "text":
                blocks.append(TextBlock(text=rng.choice(["a", "b", "hello"])))
            elif kind == "blank":
                blocks.append(TextBlock(text=rng.choice(["", " ", "\n"])))
            elif kind == "use":
                blocks.append(use(rng.choice(ids)))
            else:
                blocks.append(res(rng.choice(ids)))
        out.append(Message(role=role, content=blocks))
    return out


@pytest.mark.parametrize("seed", range(200))
def test_repair_makes_any_list_valid_and_is_stable(seed):
    messages = random_messages(random.Random(seed))
    fixed = repair(messages)
    problems = validate(fixed, for_request=False)
    assert problems == [], (seed, problems)
    assert repair(fixed) == fixed


def test_a_conversation_needing_repair_fails_loudly_under_the_strict_check(workdir):
    assert os.environ.get(STRICT_ENV) == "1"  # set for the whole suite (conftest.py)
    # A model that reuses a tool_use id makes a conversation the API would refuse.
    model = ScriptedModel({"alice": [
        Reply(tool_calls=[Call("echo", {"text": "a"}, id="toolu_same")]),
        Reply(tool_calls=[Call("echo", {"text": "b"}, id="toolu_same")]),
        Reply("never reached"),
    ]})
    agent, rec = make_agent(workdir, model)

    with pytest.raises(AssertionError, match="a tool_use id is used twice"):
        agent.run_turn("echo twice")
    assert len(model.requests) == 2  # the invalid third request was never sent
    assert any("conversation repaired" in e.text for e in rec.of(Notice))


def test_without_the_strict_check_the_conversation_is_repaired_with_a_warning(
    workdir, monkeypatch
):
    monkeypatch.delenv(STRICT_ENV)
    model = ScriptedModel({"alice": [
        Reply(tool_calls=[Call("echo", {"text": "a"}, id="toolu_same")]),
        Reply(tool_calls=[Call("echo", {"text": "b"}, id="toolu_same")]),
        Reply("done"),
    ]})
    agent, rec = make_agent(workdir, model)

    result = agent.run_turn("echo twice")

    assert (result.stop_reason, result.text) == ("end_turn", "done")
    assert validate(model.requests[2].messages) == []  # what was sent was valid
    [warning] = [e for e in rec.of(Notice) if "conversation repaired" in e.text]
    assert "a tool_use id is used twice" in warning.text


@pytest.mark.parametrize("said", ["I can't help with that.", ""])
def test_a_refusal_ends_the_turn_with_a_warning_and_the_next_turn_works(workdir, said):
    model = ScriptedModel({"alice": [
        Reply(said, stop_reason="refusal"),
        Reply("Sure, here is the summary."),
    ]})
    agent, rec = make_agent(workdir, model)

    first = agent.run_turn("do the questionable thing")

    assert (first.stop_reason, first.text) == ("end_turn", said)
    [warning] = [e for e in rec.of(Notice) if e.level == "warning"]
    assert warning.agent == "alice" and "declined" in warning.text
    assert rec.of(AgentError) == []  # a refusal is not a failure
    assert [e.stop_reason for e in rec.of(TurnFinished)] == ["end_turn"]

    second = agent.run_turn("then just summarize the file")

    assert (second.stop_reason, second.text) == ("end_turn", "Sure, here is the summary.")
    sent = model.requests[1].messages
    assert sent[-1].role == "user" and "just summarize" in sent[-1].text()
    assert validate(sent) == []
    assert validate(agent.conversation, for_request=False) == []
    assert_requests_valid(model)
    model.assert_used_up()
