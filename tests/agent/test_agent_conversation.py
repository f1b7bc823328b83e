"""The conversation's validity rules: validate() finds each breakage, repair() fixes any list."""

from __future__ import annotations

import random

import pytest

from agent_cli.agent import Conversation, repair, validate
from agent_cli.models.base import Message, TextBlock, ToolResultBlock, ToolUseBlock


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
