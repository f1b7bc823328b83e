"""Read rules (Claude Code's syntax) hold for read_file, grep, glob and edit_file: the secret's
bytes are in no tool result, whatever the spelling of the rule or of the path."""

from __future__ import annotations

import os
import threading

import pytest

from agent_cli.agent.tool_calls import ToolRunner
from agent_cli.models.base import ToolUseBlock
from agent_cli.permissions.audit import AuditLog
from agent_cli.permissions.broker import ApprovalAnswer, ApprovalBroker
from agent_cli.permissions.gate import PermissionGate
from agent_cli.permissions.policy import PermissionPolicy
from agent_cli.tools.base import ToolContext, ToolSet
from agent_cli.tools.workspace import workspace_tools
from agent_cli.tools.workspace_root import Workspace

SECRET = "s3cr3t-TOKEN-4711"
WAIT = 10.0


class Session:
    """The real gate and tools behind a ToolRunner, headless unless a human is attached."""

    def __init__(self, workdir, deny=(), ask=(), root=None, **policy_kw) -> None:
        self.workdir = workdir
        self.policy = PermissionPolicy(workdir, deny=list(deny), **policy_kw)
        for rule in ask:
            self.policy.add_rule(rule, "ask")
        self.broker = ApprovalBroker()
        self.audit = AuditLog(workdir / ".team" / "audit.jsonl")
        gate = PermissionGate(self.policy, self.broker, self.audit)
        root = root or workdir
        ws = Workspace(root, root, "in a worktree" if root != workdir else "")
        self.runner = ToolRunner("alice", ToolSet(workspace_tools()), gate, lambda e: None,
                                 lambda: ToolContext(agent="alice", workdir=root, workspace=ws))
        self.n = 0

    def call(self, tool: str, **args) -> str:
        self.n += 1
        out = self.runner.run_one(ToolUseBlock(id=f"t{self.n}", name=tool, input=args))
        return out.content

    def call_answered(self, answer: ApprovalAnswer, tool: str, **args) -> tuple[str, object]:
        self.broker.attach_ui()
        out: list[str] = []
        t = threading.Thread(target=lambda: out.append(self.call(tool, **args)))
        t.start()
        req = self.broker.next_request(timeout=WAIT)
        assert req is not None, "no approval was asked"
        self.broker.answer(req.id, answer)
        t.join(WAIT)
        return out[0], req


def plant(root) -> None:
    """.env with the secret, decoys that must stay readable, and links to the secret."""
    (root / ".env").write_text(f"API_KEY={SECRET}\n", encoding="utf-8")
    (root / "public.txt").write_text("hello public\n", encoding="utf-8")
    (root / "sub").mkdir()
    (root / "sub" / "notes.md").write_text("notes: KEY stays readable\n", encoding="utf-8")
    os.symlink(".env", root / "innocent.txt")
    os.symlink("../.env", root / "sub" / "env-link")
    os.symlink(".", root / "self")


SPELLINGS = [".env", "./.env", "sub/../.env", "innocent.txt", "sub/env-link", "self/.env",
             "self/self/./.env", "ABS"]


def rules_for(workdir) -> list[str]:
    """Every anchor Claude Code documents (HOME is the workdir's parent in these tests)."""
    return ["Read(./.env)", "Read(.env)", "Read(/.env)", "Read(**/.env)", "Read(*.env)",
            "Read(.e*)", f"Read(//{str(workdir).lstrip('/')}/.env)", f"Read(~/{workdir.name}/.env)",
            f"Read(~/{workdir.name}/**)", "Read"]


def every_read(s: Session, workdir) -> list[str]:
    """Every way the tools offer to see the secret's bytes."""
    outs = []
    for spelled in SPELLINGS:
        path = str(workdir / ".env") if spelled == "ABS" else spelled
        outs.append(s.call("read_file", path=path))
        outs.append(s.call("grep", pattern="TOKEN", path=path))
    for base in (".", "sub", "self", str(workdir)):
        outs.append(s.call("grep", pattern="s3cr3t|TOKEN", path=base))
        outs.append(s.call("grep", pattern=".", path=base, glob=".env"))
    outs.append(s.call("edit_file", path=".env", old_string="s3cr3t", new_string="x"))
    outs.append(s.call("edit_file", path="innocent.txt", old_string="API", new_string="x"))
    return outs


@pytest.fixture
def planted(workdir, monkeypatch):
    monkeypatch.setenv("HOME", str(workdir.parent))
    plant(workdir)
    return workdir


@pytest.mark.parametrize("index", range(10))
def test_no_spelling_of_the_rule_or_the_path_reveals_the_secret(planted, index):
    rule = rules_for(planted)[index]
    s = Session(planted, deny=[rule])
    for out in every_read(s, planted):
        assert SECRET not in out, (rule, out)
        assert "API_KEY" not in out, (rule, out)
    assert (planted / ".env").read_text() == f"API_KEY={SECRET}\n"  # edit_file never ran
    if rule not in ("Read", f"Read(~/{planted.name}/**)"):  # the rest stays readable
        assert "hello public" in s.call("read_file", path="public.txt")
        assert "notes.md" in s.call("grep", pattern="KEY", path=".")


def test_glob_never_lists_the_denied_file_and_says_how_many_were_withheld(planted):
    s = Session(planted, deny=["Read(./.env)"])
    for pattern in ("*", "**/*", ".env", "*env*", "**/.env", ".*", "self/.env"):
        out = s.call("glob", pattern=pattern)
        assert ".env" not in out.splitlines(), (pattern, out)
    out = s.call("glob", pattern="*")
    assert "public.txt" in out and "1 entry withheld by permission rule Read(./.env)" in out


def test_grep_over_a_directory_skips_the_file_and_says_so_without_its_content(planted):
    s = Session(planted, deny=["Read(./.env)"])
    out = s.call("grep", pattern="KEY", path=".")
    assert "sub/notes.md:1: notes: KEY stays readable" in out
    assert "1 file withheld by permission rule Read(./.env)" in out
    assert SECRET not in out and ".env:" not in out


def test_a_denied_read_is_an_error_that_names_the_rule_and_is_audited(planted):
    s = Session(planted, deny=["Read(./.env)"])
    out = s.call("read_file", path="innocent.txt")
    assert "Denied by rule Read(./.env)" in out
    [line] = [x for x in s.audit.entries() if x["tool"] == "read_file"]
    assert line["decision"] == "deny" and line["source"] == "Read(./.env)"
    assert s.call("read_file", path="public.txt").strip().endswith("hello public")


def test_a_directory_rule_covers_every_file_inside(planted):
    (planted / "keys").mkdir()
    (planted / "keys" / "id.pem").write_text("PRIVATE-KEY-BYTES", encoding="utf-8")
    for rule in ("Read(keys/)", "Read(./keys/**)", "Read(**/*.pem)", "Read(/keys)"):
        s = Session(planted, deny=[rule])
        outs = [s.call("read_file", path="keys/id.pem"),
                s.call("grep", pattern="PRIV", path="keys"),
                s.call("grep", pattern="PRIV"), s.call("glob", pattern="keys/*")]
        assert all("KEY-BYTES" not in o and "keys/id.pem\n" not in o + "\n" for o in outs), (
            rule, outs)


def test_an_ask_rule_asks_for_the_named_file_and_a_search_withholds_it(planted):
    s = Session(planted, ask=["Read(./.env)"])
    denied = s.call("read_file", path=".env")  # headless: nobody to ask
    assert SECRET not in denied and "no human was available" in denied
    assert SECRET not in s.call("grep", pattern="TOKEN")
    out, req = s.call_answered(ApprovalAnswer("allow_once"), "read_file", path="innocent.txt")
    assert req.tool == "read_file" and SECRET in out  # the human said yes to this read
    assert "rule Read(./.env)" in req.reason


def test_a_worktree_copy_is_covered_by_a_rule_written_for_the_main_tree(workdir):
    main, tree = workdir / "main", workdir / "wt"
    main.mkdir()
    tree.mkdir()
    plant(tree)
    for rule in ("Read(./.env)", f"Read(//{str(main).lstrip('/')}/.env)"):
        s = Session(main, deny=[rule], root=tree)
        for spelled in (".env", "innocent.txt", str(tree / ".env")):
            assert SECRET not in s.call("read_file", path=spelled), (rule, spelled)
        assert SECRET not in s.call("grep", pattern="TOKEN")


def test_edit_rules_take_the_same_anchors(planted):
    home = os.path.expanduser("~")
    s = Session(planted, deny=[f"Edit(//{str(planted).lstrip('/')}/sub/**)"])
    out = s.call("write_file", path="sub/new.txt", content="x")
    assert "Denied by rule Edit(//" in out and not (planted / "sub" / "new.txt").exists()
    s = Session(planted, deny=["Write(/public.txt)"])
    assert "Denied by rule" in s.call("edit_file", path="public.txt", old_string="hello",
                                      new_string="bye")
    assert (planted / "public.txt").read_text() == "hello public\n"
    assert "Write(~/x)" in [e.rule for e in PermissionPolicy(planted, deny=["Write(~/x)"]).rules()]
    assert home  # ~ expands for the rule at match time


def test_writing_a_file_the_agent_may_not_read_does_not_say_whether_it_existed(planted):
    s = Session(planted, deny=["Read(*.env)"])
    s.policy.add_rule("Write", "allow")
    assert s.call("write_file", path=".env", content="new\n").startswith("Wrote .env")
    assert s.call("write_file", path="b.env", content="new\n").startswith("Wrote b.env")
    assert s.call("write_file", path="c.txt", content="new\n").startswith("Created c.txt")


def test_the_fast_path_of_a_search_agrees_with_the_full_match(workdir, monkeypatch):
    """grep and glob skip the full match for paths no rule can cover: never wrongly."""
    from agent_cli.permissions.path_rules import PathTarget

    monkeypatch.setenv("HOME", str(workdir.parent))
    name = workdir.name
    rules = ["Read(.env)", "Read(/a/*.txt)", "Read(keys/)", "Read(**/x/**)", "Read(*.p?m)",
             f"Read(~/{name}/deep/**)", f"Read(//{str(workdir).lstrip('/')}/top)", "Read(a/**/z)"]
    paths = [".env", "a/.env", "a/b.txt", "a/c/b.txt", "keys", "keys/k", "b/keys/k", "x",
             "q/x/r", "k.pem", "d/k.pim", "deep", "deep/er", "top", "top/in", "a/z", "a/q/w/z",
             "a/z/inside", "plain.py", "sub/plain.py"]
    for rule in rules:
        policy = PermissionPolicy(workdir, deny=[rule])
        guard = policy.read_rules((workdir, workdir))
        [entry] = guard.deny
        for rel in paths:
            for is_dir in (False, True):
                full = entry.parsed.matches("Read", PathTarget.of(rel, (workdir,), is_dir), "deny")
                assert bool(guard.withheld(rel, is_dir)) == full, (rule, rel, is_dir)


def test_deny_holds_in_every_mode_and_only_bypass_skips_an_ask_rule(planted):
    for mode in ("default", "acceptEdits", "plan", "bypassPermissions"):
        s = Session(planted, deny=["Read(./.env)"], mode=mode, allow_bypass=True)
        assert SECRET not in s.call("read_file", path="innocent.txt"), mode
        assert SECRET not in s.call("grep", pattern="TOKEN"), mode
    s = Session(planted, ask=["Read(./.env)"], mode="bypassPermissions", allow_bypass=True)
    assert SECRET in s.call("read_file", path=".env")  # nothing asks in bypassPermissions
    assert SECRET in s.call("grep", pattern="TOKEN")
