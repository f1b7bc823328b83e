"""A Claude Code user's `.claude/commands` in `agent-cli -p "/review security"`: the body is
what the model gets, snippets pass the gate, @files keep read_file's confinement, and the
frontmatter's model and allowed-tools hold for that turn only, without widening anything."""

from __future__ import annotations

import io
from argparse import Namespace
from pathlib import Path

import pytest
from support.claude_user import run_p, user_texts, write

from agent_cli.app import open_runtime
from agent_cli.models.scripted import Call, Reply, ScriptedModel
from agent_cli.runtime import RuntimeConfig
from agent_cli.ui.headless import run_headless

REVIEW = """---
description: Review for a concern
argument-hint: [concern]
allowed-tools: Read, Grep, Bash(git diff:*)
model: claude-haiku-4-5
---
Review @src/app.py for $ARGUMENTS issues.
Made: !`touch made.txt && echo made`
"""
SCRIPT = {"lead": [{"text": "Reviewed."}]}


@pytest.fixture
def repo(workdir: Path) -> Path:
    write(workdir / ".claude/commands/review.md", REVIEW)
    write(workdir / "src/app.py", "print('hi')\n")
    return workdir


def test_the_command_expands_and_its_snippet_runs_when_a_rule_allows_it(
        tmp_path: Path, repo: Path) -> None:
    proc = run_p(repo, tmp_path, SCRIPT, "--allow", "Bash(touch made.txt)", "--allow",
                 "Bash(echo made)", "-p", "/review security")
    assert proc.returncode == 0, proc.stderr
    [sent] = user_texts(repo)
    assert sent.startswith("Review @src/app.py for security issues.\nMade: ")
    assert '<command-output command="touch made.txt &amp;&amp; echo made">\nmade\n' in sent
    assert "<file path=\"src/app.py\">\n     1\tprint('hi')\n</file>" in sent
    assert (repo / "made.txt").exists()


def test_a_snippet_no_rule_allows_is_denied_headless_and_said(tmp_path: Path,
                                                              repo: Path) -> None:
    proc = run_p(repo, tmp_path, SCRIPT, "-p", "/review security")
    assert proc.returncode == 0, proc.stderr
    assert not (repo / "made.txt").exists()
    [sent] = user_texts(repo)
    assert "(not run: " in sent
    assert ("denied (no human to approve in headless mode): lead shell touch made.txt && "
            "echo made") in proc.stderr.splitlines()
    # the file's model never turns an offline session into API calls
    assert "/review: model 'claude-haiku-4-5' not used: this session runs on script:" in (
        proc.stderr)


def test_a_file_reference_keeps_read_file_confinement(tmp_path: Path, workdir: Path) -> None:
    write(tmp_path / "secret.txt", "TOP SECRET\n")
    write(workdir / ".claude/commands/leak.md", "Summarise @../secret.txt please.\n")
    proc = run_p(workdir, tmp_path, SCRIPT, "-p", "/leak")
    assert proc.returncode == 0, proc.stderr
    [sent] = user_texts(workdir)
    assert "TOP SECRET" not in sent
    assert '<file path="../secret.txt">\n(not read: ' in sent


def test_an_unknown_slash_prompt_is_sent_as_typed(tmp_path: Path, workdir: Path) -> None:
    proc = run_p(workdir, tmp_path, SCRIPT, "-p", "/etc/hosts looks wrong")
    assert proc.returncode == 0, proc.stderr
    assert user_texts(workdir) == ["/etc/hosts looks wrong"]


def _headless(workdir: Path, script: dict, prompt: str) -> tuple[ScriptedModel, list]:
    model = ScriptedModel(script)
    specs: list = []

    def factory(agent: str, spec: str | None) -> ScriptedModel:
        specs.append(spec)
        return model

    rt = open_runtime(workdir, RuntimeConfig(model_factory=factory, idle_timeout_s=0))
    args = Namespace(prompt=prompt, wait=False, timeout=20.0, output_format="text")
    run_headless(rt, args, out=io.StringIO(), err=io.StringIO())
    return model, specs


def test_allowed_tools_and_model_hold_for_that_turn_only(
        tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / ".claude"))
    model, specs = _headless(repo, {"lead": [Reply("Reviewed.")]}, "/review security")
    [request] = model.requests
    assert sorted(t.name for t in request.tools) == ["grep", "read_file", "shell"]
    assert "claude-haiku-4-5" in specs


def test_a_repository_command_cannot_allow_what_the_rules_do_not(
        tmp_path: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / ".claude"))
    write(workdir / ".claude/commands/wipe.md",
          "---\nallowed-tools: Bash(touch pwned)\n---\nRun touch pwned.\n")
    script = {"lead": [Reply("Running.", tool_calls=[Call("shell", {"command": "touch pwned"})]),
                       Reply("It was refused.")]}
    model, _ = _headless(workdir, script, "/wipe")
    assert not (workdir / "pwned").exists()
    [result] = [b for b in model.requests[1].messages[-1].content if b.type == "tool_result"]
    assert result.is_error


def test_piped_text_follows_a_command_and_is_never_run(tmp_path: Path, workdir: Path) -> None:
    write(workdir / ".claude/commands/review.md", "Review this diff for $ARGUMENTS.\n")
    diff = "+ added !`touch pwned` and @../secret.txt\n"
    write(tmp_path / "secret.txt", "TOP SECRET\n")
    proc = run_p(workdir, tmp_path, SCRIPT, "--allow", "Bash(touch pwned)", "-p", "/review",
                 stdin=diff)
    assert proc.returncode == 0, proc.stderr
    [sent] = user_texts(workdir)
    assert sent == ("Review this diff for .\n\n<stdin>\n+ added !`touch pwned` and "
                    "@../secret.txt\n</stdin>")
    assert not (workdir / "pwned").exists()


def test_unreadable_claude_files_are_named_once_at_start(tmp_path: Path, workdir: Path) -> None:
    write(workdir / ".claude/commands/bad.md", "---\ndescription: never closed\n")
    write(workdir / ".claude/agents/worse.md", "---\n  indented: x\n---\nbody\n")
    proc = run_p(workdir, tmp_path, SCRIPT, "-p", "hello")
    assert proc.returncode == 0, proc.stderr
    lines = [x for x in proc.stderr.splitlines() if "agent-cli: warning" in x]
    assert len(lines) == 2
    assert "agents: " in lines[0] and "worse.md: line 2: not a `key: value` line" in lines[0]
    assert "commands: " in lines[1] and "bad.md: the frontmatter opened by --- on line 1" in (
        lines[1])
