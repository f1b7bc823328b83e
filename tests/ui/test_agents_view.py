"""`/agents` lists the agent types with their tools, model and file, and names the files it
could not read; a file's text is shown as text, never as markup."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from rich.console import Console
from support.claude_user import write
from support.team import make_runtime

from agent_cli.models.scripted import ScriptedModel
from agent_cli.ui.render import UiSettings
from agent_cli.ui.slash import SlashContext, dispatch


class _Lead:
    agent = None
    busy = False


def test_agents_lists_types_and_problems(workdir: Path, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "home" / ".claude"))
    write(workdir / ".claude/agents/code-reviewer.md",
          "---\ndescription: Reviews [bold]diffs[/bold]\ntools: Read, Grep\nmodel: haiku\n---\n"
          "Review.\n")
    write(tmp_path / "home/.claude/agents/writer.md", "Write docs.\n")
    os.symlink(tmp_path / "nowhere.md", workdir / ".claude/agents/linked.md")
    rt = make_runtime(workdir, ScriptedModel({}))
    buf = io.StringIO()
    ctx = SlashContext(Console(file=buf, width=200, color_system=None), rt, _Lead(),
                       UiSettings())
    assert dispatch(ctx, "/agents").ok
    out = buf.getvalue()
    assert "Reviews [bold]diffs[/bold]" in out
    assert "Read, Grep" in out and "haiku" in out and ".claude/agents/code-reviewer.md" in out
    assert "writer" in out and "all" in out and "~/.claude/agents/writer.md" in out
    assert "not loaded: " in out and "linked.md: a symlink; not followed" in out
    rt.close(2.0)
