"""Skills: every agent's system prompt names each skill with its description, and only that;
the `skill` tool loads the body and the files beside it on request, confined to the skill's
folder; odd files are named, never followed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.claude_user import write
from support.team import WAIT, Recorder, Reply, complete_claimed, make_runtime

from agent_cli.claude.skills import load_skills
from agent_cli.models.scripted import Call, ScriptedModel
from agent_cli.tools.base import ToolContext
from agent_cli.tools.skill import skill_tool

PDF = """---
name: pdf-forms
description: Fill PDF forms with pdftk
---
Use `pdftk form.pdf fill_form data.fdf output out.pdf`.
"""


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "home" / ".claude"))
    return tmp_path / "home"


def _skills(workdir: Path, home: Path) -> None:
    write(workdir / ".claude/skills/pdf-forms/SKILL.md", PDF)
    write(workdir / ".claude/skills/pdf-forms/reference.md", "Field names: name, date\n")
    write(home / ".claude/skills/changelog/SKILL.md",
          "---\ndescription: Write a changelog entry\n---\nKeep a Changelog style.\n")
    write(home / "private.txt", "HOME SECRET\n")


def test_lead_and_teammates_see_names_and_descriptions_only(workdir: Path, home: Path,
                                                            cleanup) -> None:
    _skills(workdir, home)
    model = ScriptedModel({"lead": [Reply("ok")], "amy": [complete_claimed("done")]})
    rt = make_runtime(workdir, model)
    cleanup(rt)
    rec = Recorder(rt)
    lead = rt.team.make_lead()
    lead.run_turn("hello")
    rt.board.create("write the entry")
    rt.team.spawn("amy", "writer")
    rec.wait_event("TaskEvent", agent="amy", action="completed", task_id=1)
    assert rt.team.wait_quiet(WAIT)
    for request in (model.requests_for("lead")[0], model.requests_for("amy")[0]):
        assert "- pdf-forms: Fill PDF forms with pdftk" in request.system
        assert "- changelog: Write a changelog entry" in request.system
        assert "pdftk form.pdf" not in request.system  # the body waits for the tool
        assert "skill" in {t.name for t in request.tools}


def test_the_skill_tool_loads_the_body_and_its_files_confined(workdir: Path,
                                                              home: Path) -> None:
    _skills(workdir, home)
    tool = skill_tool(load_skills(workdir, home / ".claude", home / ".agent-cli"))
    ctx = ToolContext(agent="lead", workdir=workdir)

    def run(**raw) -> tuple[bool, str]:
        out = tool.run(tool.parse(raw), ctx)
        return out.is_error, out.content

    err, text = run(name="pdf-forms")
    assert not err and text.startswith("Use `pdftk form.pdf")
    assert text.endswith("Files beside it (read one with skill(name, file)): reference.md")
    assert run(name="pdf-forms", file="reference.md") == (False, "Field names: name, date\n")
    assert run(name="changelog") == (False, "Keep a Changelog style.")
    err, text = run(name="changelog", file="../../private.txt")
    assert err and "HOME SECRET" not in text
    err, text = run(name="nope")
    assert err and text == "no skill 'nope'; available: pdf-forms, changelog"


def test_odd_skill_folders_are_named_and_skipped(workdir: Path, home: Path) -> None:
    write(home / "elsewhere/SKILL.md", "---\ndescription: planted\n---\nx\n")
    os.makedirs(workdir / ".claude/skills")
    os.symlink(home / "elsewhere", workdir / ".claude/skills/linked")
    write(workdir / ".claude/skills/bad/SKILL.md", "---\ndescription: x\n")
    found = load_skills(workdir, home / ".claude", home / ".agent-cli")
    assert found.skills == {}
    problems = "\n".join(found.problems)
    assert "linked: a symlink; not followed" in problems and "bad/SKILL.md" in problems


def test_a_teammate_loads_a_skill_when_it_asks(workdir: Path, home: Path, cleanup) -> None:
    _skills(workdir, home)
    model = ScriptedModel({"amy": [Reply(tool_calls=[Call("skill", {"name": "pdf-forms"})]),
                                   Reply("loaded")]})
    rt = make_runtime(workdir, model)
    cleanup(rt)
    rec = Recorder(rt)
    rt.team.spawn("amy", "writer", prompt="fill the form")
    rec.wait_event("ToolFinished", agent="amy", tool="skill")
    assert rt.team.wait_quiet(WAIT)
    second = model.requests_for("amy")[1]
    [result] = [b for b in second.messages[-1].content if b.type == "tool_result"]
    assert not result.is_error and "pdftk form.pdf" in str(result.content)
