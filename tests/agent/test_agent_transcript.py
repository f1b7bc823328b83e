"""Transcripts on disk and restoring a conversation from them (also across a killed process)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

from support.agent import WAIT, assert_requests_valid, make_agent, results_of

from agent_cli.agent import validate
from agent_cli.agent.transcript import load_conversation
from agent_cli.events import Notice
from agent_cli.models.base import Message
from agent_cli.models.scripted import Call, Reply, ScriptedModel


def records(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_every_message_is_appended_with_time_and_agent(workdir):
    model = ScriptedModel(
        {"alice": [Reply("checking", [Call("echo", {"text": "hi"})]), Reply("done")]}
    )
    agent, _ = make_agent(workdir, model)

    agent.run_turn("hello")

    path = workdir / ".team" / "transcripts" / "alice.jsonl"
    recs = records(path)
    assert [(r["kind"], r["message"]["role"]) for r in recs] == [
        ("message", "user"),
        ("message", "assistant"),
        ("message", "user"),
        ("message", "assistant"),
    ]
    assert all(r["agent"] == "alice" and r["ts"].endswith("Z") for r in recs)
    assert recs[2]["message"]["content"][0]["content"] == "hi"


def test_restore_rebuilds_the_same_valid_conversation(workdir):
    model = ScriptedModel(
        {
            "alice": [
                Reply("", [Call("echo", {"text": "1"})]),
                Reply("one"),
                Reply("two"),
                Reply("three"),
            ]
        }
    )
    agent, _ = make_agent(workdir, model)
    agent.run_turn("first")
    agent.run_turn(["second", "<inbox>bob: ping</inbox>"])

    again, _ = make_agent(workdir, model, resume=True)

    assert again.conversation == agent.conversation
    again.run_turn("third")
    opening = model.requests[-1].messages[0].content[0]
    assert opening.text.startswith("<identity>You are 'alice', role: tester")
    assert_requests_valid(model)


def test_restore_continues_from_the_last_compaction(workdir):
    replies = [Reply(f"s{i}", [Call("echo", {"text": str(i)})]) for i in range(3)]
    model = ScriptedModel({"alice": [*replies, Reply("ok"), Reply("SUMMARY"), Reply("after")]})
    agent, _ = make_agent(workdir, model)
    agent.run_turn("work")
    assert agent.compact()
    agent.run_turn("more")

    messages, problems = load_conversation(agent.transcript_path)

    assert problems == []
    assert "<summary>\nSUMMARY\n</summary>" in messages[0].text()
    assert messages[-1].text() == "after"
    assert validate(messages, for_request=False) == []
    kinds = [r["kind"] for r in records(agent.transcript_path)]
    assert kinds.count("compaction") == 1 and kinds.count("message") > 8  # history kept


def test_a_torn_line_is_reported_by_name_and_skipped(workdir):
    model = ScriptedModel({"alice": [Reply("hi"), Reply("again")]})
    agent, _ = make_agent(workdir, model)
    agent.run_turn("hello")
    with open(agent.transcript_path, "a") as fh:
        fh.write('{"ts": "2025-01-01T00:00:00Z", "kind": "mess')  # a writer killed mid-line

    again, rec = make_agent(workdir, model, resume=True)

    [warning] = rec.of(Notice)
    assert "alice.jsonl:3" in warning.text and warning.level == "warning"
    assert [m.text() for m in again.conversation] == ["hello", "hi"]
    again.run_turn("still there?")
    assert_requests_valid(model)


CHILD = textwrap.dedent(
    """
    import sys, threading
    from pathlib import Path
    from pydantic import BaseModel
    from agent_cli.agent import Agent, Identity
    from agent_cli.events import EventBus
    from agent_cli.models.scripted import ScriptedModel
    from agent_cli.tools.base import Tool, ToolSet

    class Args(BaseModel):
        command: str

    def hang(args, ctx):
        print("tool started", flush=True)
        threading.Event().wait(60)
        return "never"

    workdir = Path(sys.argv[1])
    model = ScriptedModel.from_file(workdir / "script.json")
    tools = ToolSet([Tool("shell", "Run a command.", Args, hang)])
    agent = Agent(Identity("bob", "builder", "default", workdir), "sys", model, tools, None,
                  EventBus(), transcript_dir=workdir / ".team" / "transcripts")
    agent.run_turn("build it")
    """
)


def test_a_teammate_killed_mid_tool_restarts_with_a_valid_conversation(workdir):
    script = {
        "bob": [
            {
                "text": "building",
                "tool_calls": [
                    {"name": "shell", "input": {"command": "make"}},
                    {"name": "shell", "input": {"command": "make test"}},
                ],
            }
        ]
    }
    (workdir / "script.json").write_text(json.dumps(script))
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(workdir)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout.readline().strip() == "tool started"
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(WAIT)
        child.stdout.close()

    model = ScriptedModel({"bob": [Reply("resuming")]})
    bob, _ = make_agent(workdir, model, name="bob", resume=True)

    answers = results_of(bob.conversation[-1])
    assert [a.content for a in answers] == ["interrupted by the user"] * 2
    assert bob.run_turn("you were restarted; carry on").text == "resuming"
    first = model.requests[0].messages
    assert first[0].content[0].text.startswith("<identity>You are 'bob'")
    assert first[1].tool_uses()[0].input == {"command": "make"}
    assert_requests_valid(model)


def test_clear_forgets_the_conversation_but_keeps_the_transcript(workdir):
    model = ScriptedModel({"alice": [Reply("hi"), Reply("fresh")]})
    agent, _ = make_agent(workdir, model)
    agent.run_turn("hello")

    agent.clear()
    agent.run_turn("new topic")

    assert [m.text() for m in model.requests[-1].messages] == ["new topic"]
    assert records(agent.transcript_path)[0]["message"]["content"][0]["text"] == "hello"
    restored, _ = load_conversation(agent.transcript_path)
    assert restored == [
        Message(role="user", content=model.requests[-1].messages[0].content),
        agent.conversation[-1],
    ]
