"""Settings layers: user < project < local < flags; ask rules force a prompt; saving goes to
the local layer, which is kept out of git; /permissions shows each rule's layer."""

from __future__ import annotations

import json
import subprocess
from io import StringIO
from pathlib import Path
from types import SimpleNamespace

import pytest
from rich.console import Console
from support.hooks import trust_project

from agent_cli.cli import build_parser, runtime_config
from agent_cli.errors import UserError
from agent_cli.permissions.audit import AuditLog
from agent_cli.permissions.broker import ApprovalAnswer, ApprovalBroker
from agent_cli.permissions.gate import PermissionGate
from agent_cli.permissions.layers import SettingsLayers
from agent_cli.permissions.policy import PermissionPolicy
from agent_cli.tools.base import ToolContext
from agent_cli.tools.workspace import workspace_tools
from agent_cli.ui.render import UiSettings
from agent_cli.ui.slash import SlashContext, dispatch

LOCAL = ".agent-cli/settings.local.json"
PROJECT = ".agent-cli/settings.json"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    user = tmp_path / "home" / ".agent-cli"
    user.mkdir(parents=True)
    monkeypatch.setenv("AGENT_CLI_HOME", str(user))
    return user


def write(path: Path, data: dict, trust: bool = True) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    if trust and path.parent.name == ".agent-cli" and (path.parent / "settings.json").exists():
        trust_project(path.parent.parent)  # about layers, not trust: the human said yes


def test_every_layer_contributes_rules_each_with_its_layer(workdir: Path, home: Path) -> None:
    write(home / "settings.json", {"permissions": {"allow": ["Bash(ls)"]}})
    write(workdir / PROJECT, {"permissions": {"deny": ["Bash(rm *)"]}})
    write(workdir / LOCAL, {"permissions": {"ask": ["Bash(git push *)"]}})
    policy = PermissionPolicy(workdir, allow=["Bash(make)"])
    policy.add_rule("Bash(pwd)")
    got = [(e.rule, e.effect, e.layer) for e in policy.rules()]
    assert got == [
        ("Bash(ls)", "allow", "user"),
        ("Bash(rm *)", "deny", "project"),
        ("Bash(git push *)", "ask", "local"),
        ("Bash(make)", "allow", "flag"),
        ("Bash(pwd)", "allow", "session"),
    ]
    out = StringIO()
    ctx = SlashContext(Console(file=out, width=200, color_system=None),
                       SimpleNamespace(policy=policy), SimpleNamespace(busy=False, agent=None),
                       UiSettings())
    assert dispatch(ctx, "/permissions").ok
    cells = [[c.strip() for c in line.split("│")] for line in out.getvalue().splitlines()]
    rows = {c[1]: c[2] for c in cells if c[0] in ("allow", "deny", "ask")}
    assert rows == {"Bash(ls)": "user", "Bash(rm *)": "project", "Bash(git push *)": "local",
                    "Bash(make)": "flag", "Bash(pwd)": "session"}


def test_scalars_come_from_the_highest_layer_and_flags_beat_them(
    workdir: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AGENT_CLI_MODEL", raising=False)
    write(home / "settings.json", {"model": "user-model", "permissions": {"defaultMode": "plan"}})
    write(workdir / PROJECT, {"model": "project-model"})
    parse = build_parser().parse_args
    config = runtime_config(parse(["-C", str(workdir)]))
    assert (config.model, config.permission_mode) == ("project-model", "plan")
    write(workdir / LOCAL, {"model": "local-model", "permissions": {"defaultMode": "acceptEdits"}})
    config = runtime_config(parse(["-C", str(workdir)]))
    assert (config.model, config.permission_mode) == ("local-model", "acceptEdits")
    config = runtime_config(parse(["-C", str(workdir), "--model", "demo",
                                   "--permission-mode", "default"]))
    assert (config.model, config.permission_mode) == ("demo", "default")


def test_a_bad_default_mode_names_its_file(workdir: Path, home: Path) -> None:
    write(workdir / LOCAL, {"permissions": {"defaultMode": "yolo"}})
    with pytest.raises(UserError, match="settings.local.json: permissions.defaultMode 'yolo'"):
        runtime_config(build_parser().parse_args(["-C", str(workdir)]))
    write(workdir / LOCAL, {"permissions": {"defaultMode": "bypassPermissions"}})
    with pytest.raises(UserError, match="dangerously-skip-permissions"):
        runtime_config(build_parser().parse_args(["-C", str(workdir)]))


class Gate:
    def __init__(self, workdir: Path, **kw) -> None:
        self.policy = PermissionPolicy(workdir, **kw)
        self.broker = ApprovalBroker()
        self.gate = PermissionGate(self.policy, self.broker, AuditLog(workdir / "audit.jsonl"))
        self.tools = {t.name: t for t in workspace_tools()}
        self.ctx = ToolContext(agent="alice", workdir=workdir)

    def check(self, name: str, **raw):
        tool = self.tools[name]
        return self.gate.check(tool, tool.parse(raw), self.ctx)


def test_an_ask_rule_asks_even_where_an_allow_rule_or_accept_edits_would_allow(
    workdir: Path,
) -> None:
    write(workdir / PROJECT, {"permissions": {"allow": ["Bash(git *)", "Write(src/**)"],
                                              "ask": ["Bash(git push *)", "Write(src/secret*)"]}})
    g = Gate(workdir, mode="acceptEdits")
    assert g.check("shell", command="git status").allowed  # allow rule, no ask rule
    assert g.check("write_file", path="src/a.py", content="x").allowed
    # No human attached: an ask is a denial, and nothing was written.
    push = g.check("shell", command="git push origin main")
    assert not push.allowed and push.source == "headless"
    compound = g.check("shell", command="git status && git push -f")
    assert not compound.allowed  # an ask rule matches any part of a compound command
    secret = g.check("write_file", path="src/secret.txt", content="x")
    assert not secret.allowed and not (workdir / "src" / "secret.txt").exists()
    # With a human, the ask really reaches them, and their yes runs it.
    g.broker.attach_ui()
    import threading

    box = []
    t = threading.Thread(target=lambda: box.append(g.check("shell", command="git push")))
    t.start()
    req = g.broker.next_request(10.0)
    assert req is not None and req.summary == "git push"
    assert req.suggested_rule == ""  # an allow rule would not stop the next ask: none offered
    g.broker.answer(req.id, ApprovalAnswer("allow_once"))
    t.join(10.0)
    assert box[0].allowed and box[0].source == "human"


def test_a_deny_rule_still_beats_an_ask_rule(workdir: Path) -> None:
    write(workdir / PROJECT, {"permissions": {"ask": ["Bash"], "deny": ["Bash(rm *)"]}})
    g = Gate(workdir)
    d = g.check("shell", command="rm -rf x")
    assert not d.allowed and d.source == "Bash(rm *)"


def git(workdir: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=workdir, capture_output=True, text=True,
                          check=True).stdout


def test_saved_rules_go_to_the_local_layer_which_git_does_not_see(workdir: Path) -> None:
    git(workdir, "init", "-q")
    write(workdir / PROJECT, {"permissions": {"allow": ["Bash(ls)"]}}, trust=False)
    policy = PermissionPolicy(workdir)
    policy.add_rule("Bash(make test)", save=True)
    assert json.loads((workdir / LOCAL).read_text()) == {
        "permissions": {"allow": ["Bash(make test)"]}}
    assert json.loads((workdir / PROJECT).read_text()) == {"permissions": {"allow": ["Bash(ls)"]}}
    status = git(workdir, "status", "--porcelain", "--untracked-files=all")
    assert ".agent-cli/settings.json" in status and "settings.local.json" not in status
    policy.add_rule("Bash(make lint)", save=True)  # the exclude line is written once
    exclude = (workdir / ".git" / "info" / "exclude").read_text().splitlines()
    assert exclude.count("**/.agent-cli/settings.local.json") == 1
    sub = workdir / "pkg"  # a workdir below the repository root is covered too
    sub.mkdir()
    PermissionPolicy(sub).add_rule("Bash(ls)", save=True)
    status = git(workdir, "status", "--porcelain", "--untracked-files=all")
    assert "settings.local.json" not in status and ".lock" not in status


def test_update_local_keeps_keys_it_does_not_touch(workdir: Path) -> None:
    layers = SettingsLayers(workdir)
    PermissionPolicy(workdir).add_rule("Bash(ls)", save=True)

    def trust(data: dict) -> bool:
        data.setdefault("mcpTrust", {})["srv"] = True
        return True

    assert layers.update_local(trust)
    assert layers.load_local() == {"permissions": {"allow": ["Bash(ls)"]},
                                   "mcpTrust": {"srv": True}}
    assert not layers.update_local(lambda data: False)  # nothing changed: not rewritten
    PermissionPolicy(workdir).add_rule("Bash(pwd)", save=True)
    assert layers.load_local()["mcpTrust"] == {"srv": True}


def test_a_corrupt_user_layer_is_one_line_naming_it(workdir: Path, home: Path) -> None:
    (home / "settings.json").write_text("{nope", encoding="utf-8")
    with pytest.raises(UserError) as exc:
        PermissionPolicy(workdir)
    assert str(home / "settings.json") in str(exc.value) and "\n" not in str(exc.value)


def test_slash_permissions_ask_save_writes_the_local_layer(workdir: Path) -> None:
    policy = PermissionPolicy(workdir)
    out = StringIO()
    ctx = SlashContext(Console(file=out, width=200, color_system=None),
                       SimpleNamespace(policy=policy), SimpleNamespace(busy=False, agent=None),
                       UiSettings())
    assert dispatch(ctx, "/permissions ask Bash(git push *) --save").ok
    assert "added ask rule Bash(git push *) (saved to .agent-cli/settings.local.json)" in \
        out.getvalue()
    assert json.loads((workdir / LOCAL).read_text()) == {
        "permissions": {"ask": ["Bash(git push *)"]}}
    assert PermissionPolicy(workdir).find("ask", "Bash", "git push origin") is not None
    assert dispatch(ctx, "/permissions remove Bash(git push *)").ok
    assert json.loads((workdir / LOCAL).read_text())["permissions"]["ask"] == []


@pytest.mark.parametrize("kind", ["fifo", "symlink", "directory"])
def test_an_odd_settings_file_is_named_and_never_followed(workdir: Path, tmp_path: Path,
                                                          kind: str) -> None:
    import os

    path = workdir / LOCAL
    path.parent.mkdir(parents=True)
    if kind == "fifo":
        os.mkfifo(path)  # reading it would block the start forever
    elif kind == "symlink":
        target = tmp_path / "elsewhere.json"
        target.write_text(json.dumps({"permissions": {"allow": ["Bash"]}}))
        path.symlink_to(target)
    else:
        path.mkdir()
    with pytest.raises(UserError) as exc:
        PermissionPolicy(workdir)
    assert str(path) in str(exc.value) and "not a regular file" in str(exc.value)


def test_the_users_own_settings_may_be_a_dotfiles_symlink(workdir: Path, home: Path,
                                                          tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles" / "agent-cli.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text(json.dumps({"permissions": {"allow": ["Bash(ls)"]}}))
    (home / "settings.json").symlink_to(dotfiles)
    assert [(e.rule, e.layer) for e in PermissionPolicy(workdir).rules()] == [
        ("Bash(ls)", "user")]


def test_a_local_layer_written_by_anyone_is_kept_out_of_git_at_the_next_start(
    workdir: Path,
) -> None:
    from agent_cli.runtime import Runtime

    git(workdir, "init", "-q")
    write(workdir / LOCAL, {"enabledMcpjsonServers": ["srv"]})  # e.g. another part's answer
    assert "settings.local.json" in git(workdir, "status", "--porcelain", "-uall")
    Runtime.open(workdir)
    assert "settings.local.json" not in git(workdir, "status", "--porcelain", "-uall")
