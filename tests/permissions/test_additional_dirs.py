"""permissions.additionalDirectories and --add-dir: the file tools read and write there with
the workdir's confinement (no `..` or symlink way out, Read/Edit deny rules hold inside), and
a repository's list is held until the human trusts it. Effects are checked on disk."""

from __future__ import annotations

import json
import os
from io import StringIO
from pathlib import Path
from types import SimpleNamespace

import pytest
from rich.console import Console
from support.claude_user import put_json as put
from support.claude_user import run_p, transcript
from support.team import Reply, make_runtime

from agent_cli.agent.tool_calls import ToolRunner
from agent_cli.models.base import ToolUseBlock
from agent_cli.models.scripted import ScriptedModel
from agent_cli.permissions.audit import AuditLog
from agent_cli.permissions.broker import ApprovalBroker
from agent_cli.permissions.gate import PermissionGate
from agent_cli.permissions.layers import SettingsLayers
from agent_cli.permissions.policy import PermissionPolicy
from agent_cli.tools.base import ToolContext, ToolSet
from agent_cli.tools.workspace import workspace_tools
from agent_cli.tools.workspace_root import Workspace
from agent_cli.ui.render import UiSettings
from agent_cli.ui.slash import SlashContext, dispatch

SECRET = "s3cr3t-EXTRA-9931"


class Tools:
    """The real gate and file tools behind a ToolRunner (headless: asking = denied)."""

    def __init__(self, policy: PermissionPolicy, ws: Workspace | None = None) -> None:
        gate = PermissionGate(policy, ApprovalBroker(),
                              AuditLog(policy.workdir / ".team" / "audit.jsonl"))
        ws = ws or Workspace.main(policy.workdir)
        self.runner = ToolRunner("lead", ToolSet(workspace_tools()), gate, lambda e: None,
                                 lambda: ToolContext(agent="lead", workdir=ws.root,
                                                     workspace=ws))
        self.n = 0

    def __call__(self, tool: str, **args: object) -> str:
        self.n += 1
        return self.runner.run_one(ToolUseBlock(id=f"t{self.n}", name=tool, input=args)).content


@pytest.fixture
def lib(tmp_path: Path) -> Path:
    """An additional directory beside the workdir, with a file, a secret and a way out."""
    d = tmp_path / "lib"
    (d / "src").mkdir(parents=True)
    (d / "src" / "util.py").write_text("def helper():\n    return 1\n", encoding="utf-8")
    (d / ".env").write_text(f"TOKEN={SECRET}\n", encoding="utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "private.txt").write_text(f"private {SECRET}\n", encoding="utf-8")
    os.symlink(outside, d / "escape")
    os.symlink(outside / "private.txt", d / "src" / "link.txt")
    return d


def test_read_write_edit_glob_grep_work_in_an_added_directory(workdir: Path, lib: Path) -> None:
    tools = Tools(PermissionPolicy(workdir, mode="acceptEdits", add_dirs=[str(lib)]))
    assert "return 1" in tools("read_file", path=str(lib / "src/util.py"))
    out = tools("write_file", path=str(lib / "src/new.py"), content="X = 2\n")
    assert out.startswith(f"Created {lib}/src/new.py")
    assert (lib / "src/new.py").read_text() == "X = 2\n"
    tools("edit_file", path=str(lib / "src/util.py"), old_string="1", new_string="42")
    assert "return 42" in (lib / "src/util.py").read_text()
    assert f"{lib}/src/new.py" in tools("glob", pattern="**/*.py", path=str(lib)).splitlines()
    assert f"{lib}/src/util.py:2:     return 42" in tools("grep", pattern="return",
                                                           path=str(lib))
    rel = os.path.relpath(lib / "src/util.py", workdir)  # ../lib/src/util.py works too
    assert "return 42" in tools("read_file", path=rel)


@pytest.mark.parametrize("spelling", ["OUT", "LIB/../outside/private.txt", "LIB/escape/private.txt",
                                      "LIB/src/link.txt", "../outside/private.txt"])
def test_nothing_outside_every_root_is_read_or_written(workdir: Path, lib: Path,
                                                       spelling: str) -> None:
    outside = lib.parent / "outside" / "private.txt"
    path = spelling.replace("OUT", str(outside)).replace("LIB", str(lib))
    tools = Tools(PermissionPolicy(workdir, mode="acceptEdits", add_dirs=[str(lib)]))
    for tool, args in (("read_file", {}), ("write_file", {"content": "pwned"}),
                       ("edit_file", {"old_string": "private", "new_string": "pwned"})):
        out = tools(tool, path=path, **args)
        assert SECRET not in out and ("outside" in out or "symlink" in out), out
    assert tools("grep", pattern="private", path=str(lib)) == "no matches for private"
    assert outside.read_text() == f"private {SECRET}\n"  # untouched on disk
    assert not (lib / "escape" / "pwned").exists()


def test_read_and_edit_deny_rules_hold_inside_an_added_directory(workdir: Path,
                                                                lib: Path) -> None:
    policy = PermissionPolicy(workdir, mode="acceptEdits", add_dirs=[str(lib)],
                              deny=["Read(./.env)", f"Edit(//{str(lib).lstrip('/')}/src/**)"])
    tools = Tools(policy)
    assert "Denied by rule Read(./.env)" in tools("read_file", path=str(lib / ".env"))
    assert "Denied" in tools("read_file", path=str(lib / "src/../.env"))
    grep = tools("grep", pattern="TOKEN", path=str(lib))
    assert SECRET not in grep and "1 file withheld" in grep
    assert f"{lib}/.env" not in tools("glob", pattern="**/.*", path=str(lib))
    out = tools("edit_file", path=str(lib / "src/util.py"), old_string="1", new_string="9")
    assert "Denied by rule Edit(//" in out
    assert "return 1" in (lib / "src/util.py").read_text()
    assert "Denied by rule Edit(//" in tools("write_file", path=str(lib / "src/x.py"),
                                             content="X = 1\n")
    assert not (lib / "src/x.py").exists()


@pytest.mark.parametrize("entry", ["/", "~", "../outside"])
def test_a_repositorys_directories_are_held_until_trusted(workdir: Path, lib: Path,
                                                         claude_home: Path, entry: str) -> None:
    put(workdir / ".claude/settings.json", {"permissions": {"additionalDirectories": [entry]}})
    target = lib.parent / "outside" / "private.txt"
    policy = PermissionPolicy(workdir, mode="acceptEdits")
    assert policy.extra_dirs() == []
    assert SECRET not in Tools(policy)("read_file", path=str(target))
    held = SettingsLayers(workdir).held()
    assert held is not None and held.dirs == [entry]
    trusted = PermissionPolicy(workdir, layers=SettingsLayers(workdir, trust_project=True))
    assert trusted.extra_dirs(), "a trusted list applies"
    if entry != "~":  # HOME is not above the test's tmp directory
        assert SECRET in Tools(trusted)("read_file", path=str(target))


def test_the_users_own_list_applies_and_a_bad_entry_is_named(workdir: Path, lib: Path,
                                                            claude_home: Path) -> None:
    put(claude_home / "settings.json", {"permissions": {
        "additionalDirectories": [str(lib), str(lib / "missing"), 7]}})
    policy = PermissionPolicy(workdir)
    assert [d.path for d in policy.extra_dirs()] == [lib.resolve()]
    assert len(policy.dir_notes) == 2 and "no such directory" in policy.dir_notes[0]


def test_trusting_at_start_adds_the_held_directories(workdir: Path, lib: Path) -> None:
    put(workdir / ".agent-cli/settings.json", {"permissions": {
        "additionalDirectories": [str(lib)]}})
    layers = SettingsLayers(workdir)
    policy = PermissionPolicy(workdir, layers=layers)
    held = layers.held()
    assert policy.extra_dirs() == [] and held is not None
    layers.trust_project = True
    policy.apply_trusted(held)
    assert [d.path for d in policy.extra_dirs()] == [lib.resolve()]


def test_a_teammate_in_a_worktree_reads_but_never_writes_an_added_directory(
        workdir: Path, lib: Path, tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    ws = Workspace(tree, tree, "in task #3's worktree", 3)
    tools = Tools(PermissionPolicy(workdir, mode="acceptEdits", add_dirs=[str(lib)]), ws)
    assert "return 1" in tools("read_file", path=str(lib / "src/util.py"))
    out = tools("write_file", path=str(lib / "src/util.py"), content="gone\n")
    assert "skip the landing" in out
    assert "return 1" in (lib / "src/util.py").read_text()


def test_permissions_lists_the_added_directories_and_the_held_ones(workdir: Path,
                                                                  lib: Path) -> None:
    put(workdir / ".claude/settings.json", {"permissions": {"additionalDirectories": ["/"]}})
    layers = SettingsLayers(workdir)
    policy = PermissionPolicy(workdir, add_dirs=[str(lib)], layers=layers)
    out = StringIO()
    ctx = SlashContext(Console(file=out, width=220, color_system=None),
                       SimpleNamespace(policy=policy, held_settings=layers.held()),
                       SimpleNamespace(busy=False, agent=None), UiSettings())
    assert dispatch(ctx, "/permissions").ok
    lines = out.getvalue().splitlines()
    assert any(str(lib) in line and "--add-dir" in line for line in lines)
    assert "additional directory /  (.claude/settings.json: not trusted, not added)" in lines


def test_add_dir_on_the_command_line_reaches_the_agent(workdir: Path, lib: Path,
                                                      tmp_path: Path) -> None:
    """`agent-cli --add-dir` as a process: the lead's write there lands on disk under an
    Edit rule written for that directory; a deny rule still holds there."""
    target = lib / "src" / "made.py"
    script = {"lead": [{"text": "Writing.", "tool_calls": [
        {"name": "write_file", "input": {"path": str(target), "content": "MADE = 1\n"}},
        {"name": "read_file", "input": {"path": str(lib / ".env")}}]}, {"text": "Done."}]}
    home = tmp_path / "home"
    proc = run_p(workdir, home, script, "--add-dir", str(lib), "--deny", "Read(.env)",
                 "--allow", f"Edit(//{str(lib).lstrip('/')}/src/**)", "-p", "go")
    assert proc.returncode == 0, proc.stderr
    assert target.read_text() == "MADE = 1\n"
    said = json.dumps(transcript(workdir))
    assert "Denied by rule Read(.env)" in said and SECRET not in said


def test_every_agents_system_prompt_names_the_added_directories(workdir: Path, lib: Path,
                                                                cleanup) -> None:
    model = ScriptedModel({"lead": [Reply("ok")]})
    rt = make_runtime(workdir, model, add_dirs=[str(lib)])
    cleanup(rt)
    rt.team.make_lead().run_turn("hi")
    [request] = model.requests_for("lead")
    assert f"name files there by absolute path): {lib.resolve()}" in request.system


def test_the_workdir_reached_through_an_added_directory_keeps_its_protection(
        workdir: Path, tmp_path: Path) -> None:
    """An added directory above the workdir, or a link in one into it: the file is the
    workdir's, so its protected folders ask and its anchored rules hold."""
    (workdir / ".env").write_text(f"K={SECRET}\n", encoding="utf-8")
    (workdir / ".agent-cli").mkdir()
    os.symlink(workdir / ".agent-cli", tmp_path / "cfg")
    tools = Tools(PermissionPolicy(workdir, mode="acceptEdits", add_dirs=[str(tmp_path)],
                                   deny=["Read(/.env)"]))
    out = tools("write_file", path=str(tmp_path / "cfg/settings.local.json"),
                content='{"permissions": {"allow": ["Bash"]}}')
    assert "Denied" in out and "headless" in out  # asked (nobody here): never unasked
    assert not (workdir / ".agent-cli/settings.local.json").exists()
    out = tools("read_file", path=str(tmp_path / "work/.env"))
    assert "Denied by rule Read(/.env)" in out and SECRET not in out
