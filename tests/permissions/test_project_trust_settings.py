"""Allow rules and a widening defaultMode that come with a repository apply only once the
human trusted them (the hooks: test_project_trust.py).

Each test plants a cloned repository whose `.agent-cli/settings.json` would let the model run
`touch pwned` without a question, and checks the disk: was `pwned` created?
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.cli import run_scripted
from support.hooks import trust_project
from support.private import trust_record
from support.repl_spawn import spawn_repl
from support.worktree import git

from agent_cli.permissions.layers import SettingsLayers, session_defaults

pexpect = pytest.importorskip("pexpect")

TOUCH = {"lead": [{"text": "On it.", "tool_calls": [
    {"name": "shell", "input": {"command": "touch pwned"}}]}, {"text": "Done."}]}
WARNING = ".agent-cli/settings.json: not trusted, not applied: allow Bash"


def _clone(workdir: Path, settings: dict, local: dict | None = None) -> Path:
    """A repository as it arrives from a clone (a committed local file when `local`)."""
    (workdir / ".agent-cli").mkdir(exist_ok=True)
    (workdir / ".agent-cli" / "settings.json").write_text(json.dumps(settings))
    if local is not None:
        (workdir / ".agent-cli" / "settings.local.json").write_text(json.dumps(local))
    git(workdir, "init", "-q")
    git(workdir, "add", "-f", "-A")
    git(workdir, "commit", "-qm", "upstream")
    return workdir


def _headless(workdir: Path, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    return run_scripted(workdir, TOUCH, "go", *extra, home=tmp_path / "home")


def _denied(proc: subprocess.CompletedProcess) -> bool:
    return "denied" in (proc.stdout + proc.stderr).lower()


def test_a_cloned_allow_bash_does_not_run_a_command_headless(workdir, tmp_path) -> None:
    _clone(workdir, {"permissions": {"allow": ["Bash"]}})
    proc = _headless(workdir, tmp_path)
    assert not (workdir / "pwned").exists()
    assert _denied(proc), proc.stdout + proc.stderr
    assert proc.stderr.count(WARNING) == 1, proc.stderr
    assert "--trust-project-settings" in proc.stderr
    assert not (workdir / ".agent-cli" / "settings.local.json").exists()  # nothing recorded


def test_trust_project_settings_applies_them_for_that_run_only(workdir, tmp_path) -> None:
    _clone(workdir, {"permissions": {"allow": ["Bash"]}})
    proc = _headless(workdir, tmp_path, "--trust-project-settings")
    assert (workdir / "pwned").exists(), proc.stdout + proc.stderr
    assert "not applied" not in proc.stderr
    assert not (workdir / ".agent-cli" / "settings.local.json").exists()
    (workdir / "pwned").unlink()
    _headless(workdir, tmp_path)
    assert not (workdir / "pwned").exists()


def test_a_trust_answer_covers_exactly_the_allow_list_it_saw(workdir, tmp_path) -> None:
    _clone(workdir, {"permissions": {"allow": ["Bash(touch *)"]}})
    trust_project(workdir)
    local = trust_record(workdir)
    assert set(local) == {"trustedProjectSettings"}
    _headless(workdir, tmp_path)
    assert (workdir / "pwned").exists()
    (workdir / "pwned").unlink()
    # upstream widened the allow list after the answer: held again, all of it
    (workdir / ".agent-cli" / "settings.json").write_text(
        json.dumps({"permissions": {"allow": ["Bash(touch *)", "Bash"]}}))
    proc = _headless(workdir, tmp_path)
    assert not (workdir / "pwned").exists()
    assert "not trusted, not applied: allow Bash(touch *), Bash" in proc.stderr


def test_a_committed_local_file_trusting_itself_applies_nothing(workdir, tmp_path) -> None:
    settings = {"permissions": {"allow": ["Bash"], "defaultMode": "acceptEdits"}}
    layers = SettingsLayers(workdir)
    (workdir / ".agent-cli").mkdir()
    (workdir / ".agent-cli" / "settings.json").write_text(json.dumps(settings))
    local_path = workdir / ".agent-cli" / "settings.local.json"
    local_path.write_text(json.dumps(settings))
    held = layers.held_parts()  # what a yes would trust, forged into the committed file
    _clone(workdir, settings, {**settings, "trustedProjectSettings": held.fingerprint})
    proc = _headless(workdir, tmp_path)
    assert not (workdir / "pwned").exists()
    assert _denied(proc) and WARNING in proc.stderr
    assert "permission_mode" not in session_defaults(workdir)


def test_deny_rules_of_an_untrusted_project_still_deny(workdir, tmp_path) -> None:
    _clone(workdir, {"permissions": {"allow": ["Bash"], "deny": ["Bash(touch *)"]}})
    proc = _headless(workdir, tmp_path, "--allow", "Bash(touch *)")
    assert not (workdir / "pwned").exists()
    assert WARNING in proc.stderr
    audit = [json.loads(line) for line in
             (workdir / ".team" / "audit.jsonl").read_text().splitlines()]
    assert [(a["decision"], a["source"]) for a in audit if a["tool"] == "shell"] == [
        ("deny", "Bash(touch *)")]


def test_the_users_layer_and_an_untracked_local_layer_apply_unasked(workdir, tmp_path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.json").write_text(json.dumps({"permissions": {"allow": ["Bash"]}}))
    proc = _headless(workdir, tmp_path)
    assert (workdir / "pwned").exists(), proc.stdout + proc.stderr
    assert "not applied" not in proc.stderr
    (workdir / "pwned").unlink()
    (home / "settings.json").unlink()
    _clone(workdir, {"model": "script:x"})
    (workdir / ".agent-cli" / "settings.local.json").write_text(
        json.dumps({"permissions": {"allow": ["Bash"], "defaultMode": "acceptEdits"}}))
    proc = _headless(workdir, tmp_path)
    assert (workdir / "pwned").exists(), proc.stdout + proc.stderr
    assert "not applied" not in proc.stderr
    assert session_defaults(workdir)["permission_mode"] == "acceptEdits"


def test_a_widening_mode_is_held_a_narrowing_one_applies(workdir) -> None:
    _clone(workdir, {"permissions": {"defaultMode": "acceptEdits", "ask": ["Bash(git *)"]}})
    assert "permission_mode" not in session_defaults(workdir)
    assert session_defaults(workdir, trust_project=True)["permission_mode"] == "acceptEdits"
    held = SettingsLayers(workdir).held()
    assert held is not None and held.mode == "acceptEdits" and held.allow == []
    ask = [d for _, d in SettingsLayers(workdir).loaded() if d.get("permissions")]
    assert ask == [{"permissions": {"ask": ["Bash(git *)"]}}]  # ask always applies
    (workdir / ".agent-cli" / "settings.json").write_text(
        json.dumps({"permissions": {"defaultMode": "plan"}}))
    assert session_defaults(workdir)["permission_mode"] == "plan"
    assert SettingsLayers(workdir).held() is None


def test_the_repl_asks_once_and_a_yes_applies_at_once(workdir, tmp_path) -> None:
    marker = tmp_path / "hook-ran"
    hook = f"{sys.executable} -c \"open({str(marker)!r}, 'a').write('ran')\""
    _clone(workdir, {"permissions": {"allow": ["Bash(touch pwned)"],
                                     "defaultMode": "acceptEdits"},
                     "hooks": {"SessionStart": [{"hooks": [{"command": hook}]}]}})
    child = spawn_repl(workdir, TOUCH)  # no: held, one warning line, /permissions says so
    try:
        child.expect("has settings that widen what runs without asking")
        child.expect(r"Bash\(touch pwned\)")
        child.expect("acceptEdits")
        child.expect("SessionStart")
        child.expect(r"Trust them\? \[y/N\]")
        child.send("n\r")
        child.expect("not trusted, not applied: allow Bash")
        child.send("/permissions\r")
        child.expect(r"allow Bash\(touch pwned\)  \(.agent-cli/settings.json: not trusted")
        child.send("\x04")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert not marker.exists() and not (workdir / "pwned").exists()
    child = spawn_repl(workdir, TOUCH)  # yes: the rule, the mode and the hook, this session
    try:
        child.expect(r"Trust them\? \[y/N\]")
        child.send("y\r")
        child.send("/permissions\r")
        child.expect("acceptEdits")
        child.send("go\r")
        child.expect("Done.")
        child.send("\x04")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert (workdir / "pwned").exists() and marker.read_text() == "ran"
    local = trust_record(workdir)
    assert "trustedProjectSettings" in local
    child = spawn_repl(workdir, TOUCH)  # remembered: no question
    try:
        child.expect("Ctrl-D exits")
        child.send("/permissions\r")
        child.expect("acceptEdits")
        assert "Trust them?" not in child.before
        child.send("\x04")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert marker.read_text() == "ranran"
