"""Claude Code's settings files as layers: their place next to agent-cli's own (agent-cli's
file of the same kind wins a scalar), Claude Code's rule forms for tools agent-cli lacks
(kept, listed in /permissions, matched against nothing), MultiEdit as Edit, a bare Grep /
Glob deny rule on that tool, and a rule agent-cli cannot read never stopping the start."""

from __future__ import annotations

from io import StringIO
from pathlib import Path
from types import SimpleNamespace

import pytest
from rich.console import Console
from support.claude_user import put_json as put

from agent_cli.permissions.audit import AuditLog
from agent_cli.permissions.broker import ApprovalBroker
from agent_cli.permissions.gate import PermissionGate
from agent_cli.permissions.layers import SettingsLayers, session_defaults
from agent_cli.permissions.policy import PermissionPolicy
from agent_cli.tools.base import ToolContext
from agent_cli.tools.workspace import workspace_tools
from agent_cli.ui.render import UiSettings
from agent_cli.ui.slash import SlashContext, dispatch


def test_layers_interleave_claude_code_files_below_agent_clis_own(workdir: Path,
                                                                  claude_home: Path) -> None:
    names = [layer.name for layer in SettingsLayers(workdir).layers]
    assert names == ["claude-user", "user", "claude-project", "project", "claude-local",
                     "local"]


def test_agent_clis_file_wins_a_scalar_both_set(workdir: Path, claude_home: Path) -> None:
    put(workdir / ".claude/settings.json", {"model": "opus",
                                            "permissions": {"defaultMode": "plan"}})
    assert session_defaults(workdir) == {"model": "claude-opus-4-1", "permission_mode": "plan"}
    put(workdir / ".agent-cli/settings.json", {"model": "claude-haiku-4-5"})
    assert session_defaults(workdir)["model"] == "claude-haiku-4-5"
    put(workdir / ".claude/settings.local.json", {"model": "sonnet"})  # a higher kind wins
    assert session_defaults(workdir)["model"] == "claude-sonnet-4-5"


def test_a_claude_value_agent_cli_cannot_use_is_passed_over(workdir: Path,
                                                            claude_home: Path) -> None:
    put(claude_home / "settings.json", {"model": "opusplan",
                                        "permissions": {"defaultMode": "bypassPermissions"}})
    assert session_defaults(workdir) == {}  # neither stops the start; named at start


def test_rules_for_tools_agent_cli_lacks_are_kept_and_listed(workdir: Path,
                                                             claude_home: Path) -> None:
    put(workdir / ".claude/settings.json", {"permissions": {
        "deny": ["Task", "Agent(Explore)", "NotebookEdit(*.ipynb)", "Bash(git * --force)",
                 "Glob(src/**)"]}})
    policy = PermissionPolicy(workdir)  # no exit: the start goes on
    kept = [(e.rule, e.layer) for e in policy.not_applicable()]
    assert kept == [(r, "claude-project") for r in ("Task", "Agent(Explore)",
                    "NotebookEdit(*.ipynb)", "Bash(git * --force)", "Glob(src/**)")]
    assert policy.find("deny", "Bash", "git push --force") is None  # not a guess of a match
    out = StringIO()
    ctx = SlashContext(Console(file=out, width=220, color_system=None),
                       SimpleNamespace(policy=policy), SimpleNamespace(busy=False, agent=None),
                       UiSettings())
    assert dispatch(ctx, "/permissions").ok
    listed = [line for line in out.getvalue().splitlines() if "Agent(Explore)" in line]
    assert listed and "settings: .claude/settings.json (not applicable here)" in listed[0]


def test_a_bad_rule_in_agent_clis_own_file_still_stops_the_start(workdir: Path) -> None:
    put(workdir / ".agent-cli/settings.local.json", {"permissions": {"deny": ["Task(x"]}})
    with pytest.raises(Exception, match="settings.local.json"):
        PermissionPolicy(workdir)


def _gate(policy: PermissionPolicy, workdir: Path) -> tuple[PermissionGate, dict, ToolContext]:
    gate = PermissionGate(policy, ApprovalBroker(), AuditLog(workdir / ".team" / "audit.jsonl"))
    tools = {t.name: t for t in workspace_tools()}
    return gate, tools, ToolContext(agent="lead", workdir=workdir)


def test_multiedit_is_edit_and_a_bare_grep_deny_holds_the_grep_tool(workdir: Path,
                                                                    claude_home: Path) -> None:
    put(claude_home / "settings.json", {"permissions": {
        "allow": ["Edit"], "deny": ["MultiEdit(secrets/**)", "Grep"]}})
    (workdir / "secrets").mkdir()
    (workdir / "secrets" / "k.txt").write_text("old\n", encoding="utf-8")
    policy = PermissionPolicy(workdir)
    gate, tools, ctx = _gate(policy, workdir)
    edit = tools["edit_file"]
    args = edit.input_model(path="secrets/k.txt", old_string="old", new_string="new")
    assert not gate.check(edit, args, ctx).allowed
    grep = tools["grep"]
    decision = gate.check(grep, grep.input_model(pattern="old"), ctx)
    assert not decision.allowed and "Denied by rule Grep" in decision.message
    glob = tools["glob"]
    assert gate.check(glob, glob.input_model(pattern="**/*"), ctx).allowed


def test_a_cloned_repositorys_claude_allow_rules_apply_once_trusted(workdir: Path,
                                                                    claude_home: Path) -> None:
    put(workdir / ".claude/settings.json", {"permissions": {"allow": ["Bash(make test)"],
                                                            "deny": ["Bash(rm *)"]}})
    layers = SettingsLayers(workdir)
    held = layers.held()
    assert held is not None and held.allow == ["Bash(make test)"]
    assert held.files == [".claude/settings.json"]
    policy = PermissionPolicy(workdir, layers=layers)
    assert policy.find("allow", "Bash", "make test") is None  # held
    assert policy.find("deny", "Bash", "rm -rf x") is not None  # deny applies at once
    layers.trust(held)  # the human's yes, kept in host-private state
    assert SettingsLayers(workdir).held() is None
    assert PermissionPolicy(workdir).find("allow", "Bash", "make test") is not None
    put(workdir / ".claude/settings.json", {"permissions": {"allow": ["Bash"]}})
    assert SettingsLayers(workdir).held() is not None  # changed upstream: asked again
