"""Agent definitions as teammate types: a teammate spawned by type gets agent-cli's identity
and protocol plus the type's prompt, its model, and only its tools besides the board and team
tools; the role is the type, so tasks routed to that role reach it."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.claude_user import write
from support.team import WAIT, Call, Recorder, Reply, complete_claimed

from agent_cli.app import open_runtime
from agent_cli.models.scripted import ScriptedModel
from agent_cli.runtime import RuntimeConfig
from agent_cli.tools.base import ToolContext

REVIEWER = """---
name: code-reviewer
description: Reviews diffs for bugs
tools: Read, Grep, Glob
model: haiku
---
You review code. Never edit files.
"""


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "home" / ".claude"))
    return tmp_path / "home"


def _runtime(workdir: Path, model: ScriptedModel, cleanup) -> tuple:
    specs: list[tuple[str, str | None]] = []

    def factory(agent: str, spec: str | None) -> ScriptedModel:
        specs.append((agent, spec))
        return model

    rt = open_runtime(workdir, RuntimeConfig(model_factory=factory, idle_timeout_s=0))
    cleanup(rt)
    return rt, specs


def _call(rt, tools, name: str, raw: dict) -> tuple[bool, str]:
    tool = next(t for t in tools if t.name == name)
    out = tool.run(tool.parse(raw), ToolContext(agent="lead", workdir=rt.workdir))
    return out.is_error, out.content


def test_a_typed_teammate_has_its_prompt_model_and_tools(workdir: Path, home: Path,
                                                         cleanup) -> None:
    write(workdir / ".claude/agents/code-reviewer.md", REVIEWER)
    write(home / ".claude/agents/writer.md", "---\ndescription: Writes docs\n---\nWrite.\n")
    model = ScriptedModel({"rev": [complete_claimed("looks fine")]})
    rt, specs = _runtime(workdir, model, cleanup)
    rec = Recorder(rt)
    task = rt.board.create("review the diff", role="code-reviewer")
    lead = rt.team.make_lead()
    spawn = lead.tools.get("spawn_teammate")
    assert "- code-reviewer: Reviews diffs for bugs" in spawn.description
    assert "- writer: Writes docs" in spawn.description
    err, text = _call(rt, list(lead.tools), "spawn_teammate",
                      {"name": "rev", "agent_type": "code-reviewer"})
    assert not err and text.startswith("spawned rev (code-reviewer)")
    rec.wait_event("TaskEvent", agent="rev", action="completed", task_id=task.id)
    assert rt.team.wait_quiet(WAIT)
    [request] = model.requests_for("rev")
    assert request.system.startswith("You are rev,")  # agent-cli's identity first
    assert "# Your agent type: code-reviewer" in request.system
    assert "You review code. Never edit files." in request.system
    names = {t.name for t in request.tools}
    assert {"read_file", "grep", "glob", "complete_task", "send_message"} <= names
    assert not names & {"shell", "write_file", "edit_file"}
    assert ("rev", "claude-haiku-4-5") in specs


def test_an_unknown_type_is_a_clear_tool_error(workdir: Path, home: Path, cleanup) -> None:
    write(workdir / ".claude/agents/code-reviewer.md", REVIEWER)
    rt, _ = _runtime(workdir, ScriptedModel({}), cleanup)
    lead = rt.team.make_lead()
    err, text = _call(rt, list(lead.tools), "spawn_teammate",
                      {"name": "bob", "agent_type": "designer"})
    assert err and text == "no agent type 'designer'; available: code-reviewer"
    assert rt.roster.members() == []


def test_a_role_that_names_a_type_gets_it_and_a_typed_teammate_cannot_widen(
        workdir: Path, home: Path, cleanup) -> None:
    write(workdir / ".claude/agents/shipper.md",
          "---\ntools: Bash(rm -rf *), Write\n---\nShip it.\n")
    script = {"sam": [Reply(tool_calls=[Call("shell", {"command": "touch pwned"})]),
                      Reply("could not")]}
    model = ScriptedModel(script)
    rt, _ = _runtime(workdir, model, cleanup)
    rec = Recorder(rt)
    rt.team.spawn("sam", "shipper", prompt="go")  # /spawn sam shipper
    rec.wait_event("ToolFinished", agent="sam", tool="shell")
    assert rt.team.wait_quiet(WAIT)
    assert not (workdir / "pwned").exists()  # no human, no rule: its tool list grants nothing
    names = {t.name for t in model.requests_for("sam")[0].tools}
    assert {"shell", "write_file"} <= names and "edit_file" not in names
