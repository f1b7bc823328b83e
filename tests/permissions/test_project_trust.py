"""Hooks that come with a repository run only after the human trusted them.

A cloned repository's `.agent-cli/settings.json` can carry hooks: commands that would run at
SessionStart before anyone typed a word. Each test plants such a repository and checks the
effect on disk (did the hook's command write its marker file?), not only what was printed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.cli import run_scripted
from support.private import trust_record
from support.repl_spawn import spawn_repl
from support.worktree import git

from agent_cli.permissions.project_trust import TRUST_KEY, fingerprint

pexpect = pytest.importorskip("pexpect")


def _marker_hook(marker: Path) -> dict:
    command = f"{sys.executable} -c \"open({str(marker)!r}, 'a').write('ran\\n')\""
    return {"SessionStart": [{"hooks": [{"type": "command", "command": command}]}],
            "UserPromptSubmit": [{"hooks": [{"type": "command", "command": command}]}]}


@pytest.fixture
def cloned(workdir: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A repository as it arrives from a clone: its settings.json has a hook."""
    marker = tmp_path / "hook-ran"
    (workdir / ".agent-cli").mkdir()
    (workdir / ".agent-cli" / "settings.json").write_text(
        json.dumps({"hooks": _marker_hook(marker)}))
    git(workdir, "init", "-q")
    git(workdir, "add", "-A")
    git(workdir, "commit", "-qm", "upstream")
    return workdir, marker


SCRIPT = {"lead": [{"text": "Hello."}] * 4}


def _headless(workdir: Path, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    return run_scripted(workdir, SCRIPT, "hi", *extra, home=tmp_path / "home")


def test_a_headless_run_never_runs_a_cloned_repositorys_hooks(cloned, tmp_path: Path) -> None:
    workdir, marker = cloned
    proc = _headless(workdir, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert not marker.exists()
    assert ".agent-cli/settings.json: not trusted, not applied: 2 hooks" in proc.stderr
    assert "--trust-project-settings" in proc.stderr
    assert not (workdir / ".agent-cli" / "settings.local.json").exists()  # nothing recorded


def test_trust_project_settings_runs_the_hooks_for_that_run_only(cloned, tmp_path: Path) -> None:
    workdir, marker = cloned
    proc = _headless(workdir, tmp_path, "--trust-project-settings")
    assert proc.returncode == 0, proc.stderr
    assert marker.read_text().splitlines() == ["ran", "ran"]  # SessionStart, UserPromptSubmit
    assert "not applied" not in proc.stderr
    marker.unlink()
    assert _headless(workdir, tmp_path).returncode == 0
    assert not marker.exists()


def test_a_trust_answer_covers_exactly_the_hooks_it_saw(cloned, tmp_path: Path) -> None:
    workdir, marker = cloned
    settings = workdir / ".agent-cli" / "settings.json"
    hooks = json.loads(settings.read_text())["hooks"]
    local = workdir / ".agent-cli" / "settings.local.json"
    local.write_text(json.dumps({TRUST_KEY: fingerprint({"project": {"hooks": hooks}})}))
    # the same hooks, spelled with other spacing and key order: still the trusted ones
    settings.write_text(json.dumps({"hooks": dict(reversed(list(hooks.items())))}, indent=4))
    assert _headless(workdir, tmp_path).returncode == 0
    assert marker.exists()
    marker.unlink()
    # upstream changed a command after the answer: held again
    hooks["SessionStart"][0]["hooks"][0]["command"] += " # and more"
    settings.write_text(json.dumps({"hooks": hooks}))
    proc = _headless(workdir, tmp_path)
    assert not marker.exists() and "not applied" in proc.stderr


def test_a_trust_answer_committed_with_the_repository_counts_for_nothing(
        workdir: Path, tmp_path: Path) -> None:
    marker = tmp_path / "hook-ran"
    hooks = _marker_hook(marker)
    (workdir / ".agent-cli").mkdir()
    (workdir / ".agent-cli" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    # the attacker commits a "local" file that trusts its project hooks and adds its own
    (workdir / ".agent-cli" / "settings.local.json").write_text(
        json.dumps({TRUST_KEY: fingerprint({"project": {"hooks": hooks},
                                            "local": {"hooks": hooks}}), "hooks": hooks}))
    git(workdir, "init", "-q")
    git(workdir, "add", "-f", "-A")
    git(workdir, "commit", "-qm", "upstream")
    proc = _headless(workdir, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert not marker.exists()
    assert ".agent-cli/settings.json: not trusted, not applied: 4 hooks" in proc.stderr


def test_the_users_own_hooks_run_without_a_question(workdir: Path, tmp_path: Path) -> None:
    marker = tmp_path / "hook-ran"
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.json").write_text(json.dumps({"hooks": _marker_hook(marker)}))
    proc = _headless(workdir, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert marker.read_text().splitlines() == ["ran", "ran"]
    assert "not applied" not in proc.stderr


def test_the_repl_asks_once_and_remembers_a_yes(cloned, tmp_path: Path) -> None:
    workdir, marker = cloned
    child = spawn_repl(workdir, SCRIPT)  # no: nothing runs, the warning says why
    try:
        child.expect("has settings that widen what runs without asking")
        child.expect("SessionStart")
        child.expect(r"Trust them\? \[y/N\]")
        child.send("n\r")
        child.expect(".agent-cli/settings.json: not trusted, not applied: 2 hooks")
        child.send("/hooks\r")
        child.expect("project: not trusted, not run")
        child.send("hello\r")
        child.expect("Hello.")
        child.send("\x04")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert not marker.exists()
    child = spawn_repl(workdir, SCRIPT)  # asked again; yes: they run from now on
    try:
        child.expect(r"Trust them\? \[y/N\]")
        child.send("y\r")
        child.send("hello\r")
        child.expect("Hello.")
        child.send("\x04")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert marker.read_text().splitlines() == ["ran", "ran"]
    local = trust_record(workdir)
    assert TRUST_KEY in local
    child = spawn_repl(workdir, SCRIPT)  # remembered: no question
    try:
        child.expect("Ctrl-D exits")
        child.send("/hooks\r")
        child.expect("UserPromptSubmit")
        assert "Trust them?" not in child.before
        child.send("\x04")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert marker.read_text().splitlines() == ["ran", "ran", "ran"]  # SessionStart again
