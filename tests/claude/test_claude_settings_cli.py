"""Claude Code's settings files, run unchanged headless: a fake HOME with ~/.claude/settings.json
and a cloned repository with .claude/ files. The repository's deny rules hold on disk at once;
its allow rules and env wait for trust; the user's own env and rules apply; what agent-cli
cannot honour is named once on stderr and never stops the start."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from support.claude_user import run_p, transcript, write

SECRET = "s3cr3t-TOKEN-4711"
CALLS = [
    {"name": "read_file", "input": {"path": ".env"}},
    {"name": "shell", "input": {"command": "rm keep.txt"}},
    {"name": "shell", "input": {"command": "touch made.txt"}},
    {"name": "shell", "input": {"command": "printenv GREETING PROJECT_VAR"}},
]
SCRIPT = {"lead": [{"text": "Trying.", "tool_calls": CALLS}, {"text": "Done."}]}


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=u", "-c", "user.email=u@x", *args], cwd=cwd,
                   check=True, capture_output=True)


@pytest.fixture
def world(tmp_path: Path) -> tuple[Path, Path]:
    """(a cloned repository with .claude/settings.json, a HOME with ~/.claude/settings.json)."""
    home, work = tmp_path / "home", tmp_path / "work"
    write(home / ".claude/settings.json", json.dumps({
        "env": {"GREETING": "hello-from-user"},
        "permissions": {"allow": ["Bash(printenv *)"]},
        "outputStyle": "Explanatory"}))
    write(work / ".env", f"API_KEY={SECRET}\n")
    write(work / "keep.txt", "keep me\n")
    write(work / ".claude/settings.json", json.dumps({
        "env": {"PROJECT_VAR": "planted"},
        "permissions": {"deny": ["Read(./.env)", "Bash(rm *)"],
                        "allow": ["Bash(touch made.txt)", "Bash(rm keep.txt)"],
                        "ask": ["NotebookEdit"]},
        "statusLine": {"type": "command", "command": "echo hi"}}))
    write(work / ".claude/settings.local.json", json.dumps({"permissions": {"deny": ["Task"]}}))
    _git(work, "init", "-q")
    _git(work, "add", "-A")
    _git(work, "commit", "-qm", "upstream")
    return work, home


def _seen(workdir: Path) -> str:
    return json.dumps(transcript(workdir))


def test_the_repositorys_deny_rules_hold_on_disk_and_its_allow_rules_wait(world) -> None:
    work, home = world
    proc = run_p(work, home, SCRIPT, "-p", "go")
    assert proc.returncode == 0, proc.stderr
    seen = _seen(work)
    assert SECRET not in seen and "Denied by rule Read(./.env)" in seen
    assert (work / "keep.txt").read_text(encoding="utf-8") == "keep me\n"  # deny beats allow
    assert not (work / "made.txt").exists()  # the repository's allow rule is held
    assert "hello-from-user" in seen and "planted" not in seen  # the user's env, not the repo's
    assert ".claude/settings.json: not trusted, not applied" in proc.stderr
    assert "env PROJECT_VAR" in proc.stderr


def test_trusting_the_repository_applies_its_allow_rules_and_env(world) -> None:
    work, home = world
    proc = run_p(work, home, SCRIPT, "--trust-project-settings", "-p", "go")
    assert proc.returncode == 0, proc.stderr
    assert (work / "made.txt").exists()
    assert (work / "keep.txt").exists()  # still denied: deny wins over the trusted allow
    assert "planted" in _seen(work)


def test_what_agent_cli_cannot_honour_is_named_once_and_never_stops_the_start(world) -> None:
    work, home = world
    proc = run_p(work, home, SCRIPT, "-p", "go")
    assert proc.returncode == 0, proc.stderr
    err = proc.stderr
    assert err.count("not honoured by agent-cli: outputStyle") == 1
    assert "~/.claude/settings.json" in err
    assert err.count("not applicable here") == 2  # one line per file
    assert "ask NotebookEdit" in err and "deny Task" in err


def test_a_tracked_settings_local_json_is_held_like_the_repositorys(world) -> None:
    work, home = world
    write(work / ".claude/settings.local.json",
          json.dumps({"permissions": {"allow": ["Bash(touch made.txt)"]}}))
    _git(work, "commit", "-qam", "local allow, committed")
    write(work / ".claude/settings.json", json.dumps({"permissions": {"deny": ["Bash(rm *)"]}}))
    proc = run_p(work, home, SCRIPT, "-p", "go")
    assert proc.returncode == 0, proc.stderr
    assert not (work / "made.txt").exists()
    assert "not trusted, not applied: allow Bash(touch made.txt)" in proc.stderr


def test_the_users_own_untracked_local_file_applies_without_a_question(world) -> None:
    work, home = world
    _git(work, "rm", "-q", "--cached", ".claude/settings.local.json")
    write(work / ".claude/settings.local.json",
          json.dumps({"permissions": {"allow": ["Bash(touch made.txt)"]}}))
    proc = run_p(work, home, SCRIPT, "-p", "go")
    assert proc.returncode == 0, proc.stderr
    assert (work / "made.txt").exists()
