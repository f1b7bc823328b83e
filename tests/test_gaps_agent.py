"""The turn loop's last gaps: a refusal as the user sees it, and the strict conversation check
that makes an invalid request fail a test instead of being repaired quietly."""

from __future__ import annotations

import os

import pytest
from support.agent import assert_requests_valid, make_agent

from agent_cli.agent.agent import STRICT_ENV
from agent_cli.agent.conversation import validate
from agent_cli.events import AgentError, Notice, TurnFinished
from agent_cli.models.scripted import Call, Reply, ScriptedModel


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
