"""The gate: order of checks, each mode, human answers, headless denial, the audit log."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading

import pytest
from pydantic import BaseModel

from agent_cli.permissions.audit import AuditLog
from agent_cli.permissions.broker import ApprovalAnswer, ApprovalBroker
from agent_cli.permissions.gate import PermissionGate
from agent_cli.permissions.policy import PermissionPolicy
from agent_cli.tools.base import Tool, ToolContext
from agent_cli.tools.workspace import workspace_tools

WAIT = 10.0


class NoInput(BaseModel):
    pass


def board_tool(plan_exempt: bool = False) -> Tool:
    return Tool("send_message", "", NoInput, lambda a, c: "ok", plan_exempt=plan_exempt)


class Setup:
    def __init__(self, workdir, **policy_kw) -> None:
        self.workdir = workdir
        self.policy = PermissionPolicy(workdir, **policy_kw)
        self.broker = ApprovalBroker()
        self.audit = AuditLog(workdir / ".team" / "audit.jsonl")
        self.gate = PermissionGate(self.policy, self.broker, self.audit)
        self.tools = {t.name: t for t in workspace_tools()}
        self.ctx = ToolContext(agent="alice", workdir=workdir)

    def check(self, name: str, **raw):
        tool = self.tools[name] if isinstance(name, str) else name
        return self.gate.check(tool, tool.parse(raw), self.ctx)

    def check_with_human(self, answer: ApprovalAnswer, name: str, **raw):
        """Run check() on a worker thread and answer its request from this (UI) thread."""
        self.broker.attach_ui()
        out = []
        t = threading.Thread(target=lambda: out.append(self.check(name, **raw)))
        t.start()
        req = self.broker.next_request(timeout=WAIT)
        assert req is not None
        self.broker.answer(req.id, answer)
        t.join(WAIT)
        return out[0], req

    def audit_lines(self):
        return self.audit.entries()


@pytest.fixture
def s(workdir):
    return Setup(workdir)


def test_read_only_tools_never_ask_even_in_plan_mode(s):
    s.policy.set_mode("plan")
    s.policy.add_rule("Bash", effect="deny")
    assert s.check("read_file", path="x").allowed
    assert s.check("grep", pattern="x").allowed
    assert s.broker.pending() == []


def test_headless_denial_says_no_human_was_available_and_is_audited(s):
    d = s.check("shell", command="rm -rf build")
    assert not d.allowed and d.source == "headless"
    assert "no human was available" in d.message
    [line] = s.audit_lines()
    assert line["agent"] == "alice" and line["tool"] == "shell"
    assert line["input"]["command"] == "rm -rf build"
    assert line["decision"] == "deny" and line["source"] == "headless" and line["ts"]


def test_human_denial_feedback_goes_back_as_the_result(s):
    d, req = s.check_with_human(
        ApprovalAnswer("deny", feedback="use pytest instead"), "shell", command="python t.py"
    )
    assert not d.allowed
    assert d.message == "The user denied this shell command. Feedback: use pytest instead"
    assert req.preview == "python t.py" and req.suggested_rule == "Bash(python t.py)"
    line = s.audit_lines()[-1]
    assert (line["source"], line["feedback"], line["answer"]) == (
        "human",
        "use pytest instead",
        "deny",
    )


def test_allow_always_adds_a_session_rule_so_the_next_call_does_not_ask(s):
    d, _ = s.check_with_human(ApprovalAnswer("allow_always"), "shell", command="python main.py")
    assert d.allowed
    assert [(e.rule, e.source) for e in s.policy.rules()] == [("Bash(python main.py)", "session")]
    s.broker.detach_ui()
    again = s.check("shell", command="python main.py")
    assert again.allowed and again.source == "Bash(python main.py)"
    assert not s.check("shell", command="python main.py; rm x").allowed


def test_allow_always_with_save_writes_settings(s):
    d, req = s.check_with_human(
        ApprovalAnswer("allow_always", save=True), "write_file", path="src/a.py", content="x\n"
    )
    assert d.allowed and req.suggested_rule == "Write(src/a.py)"
    assert "+x" in req.preview and "b/src/a.py" in req.preview
    saved = json.loads((s.workdir / ".agent-cli/settings.local.json").read_text())
    assert saved["permissions"]["allow"] == ["Write(src/a.py)"]


def test_compound_command_offers_no_allow_always_rule(s):
    d, req = s.check_with_human(ApprovalAnswer("allow_always"), "shell", command="ls && pwd")
    assert d.allowed and req.suggested_rule == ""
    assert s.policy.rules() == []


def test_deny_rule_beats_allow_rule_and_bypass_mode(workdir):
    s = Setup(workdir, allow=["Bash"], deny=["Bash(rm *)"], mode="bypassPermissions",
              allow_bypass=True)  # fmt: skip
    d = s.check("shell", command="ls && rm -rf x")
    assert not d.allowed and d.source == "Bash(rm *)" and "Denied by rule Bash(rm *)" in d.message
    assert s.check("shell", command="ls").allowed


def test_allow_rules_from_flags_and_file_globs(workdir):
    s = Setup(workdir, allow=["Bash(git status)", "Edit(docs/*.md)"])
    assert s.check("shell", command="git status").allowed
    assert s.check("write_file", path="docs/a.md", content="").allowed
    assert s.check("edit_file", path="./docs/a.md", old_string="a", new_string="b").allowed
    assert not s.check("write_file", path="docs/sub/a.md", content="").allowed
    assert not s.check("shell", command="git status; rm x").allowed


def test_accept_edits_mode_allows_file_changes_but_shell_still_asks(s):
    s.policy.set_mode("acceptEdits")
    assert s.check("write_file", path="a.txt", content="hi").source == "mode acceptEdits"
    assert s.check("edit_file", path="a.txt", old_string="h", new_string="H").allowed
    assert not s.check("shell", command="ls").allowed  # asked -> headless deny
    escape = s.check("write_file", path="../evil.txt", content="x")
    assert not escape.allowed and "outside the workdir" in escape.message


def test_plan_mode_refuses_every_tool_with_a_permission(s):
    s.policy.set_mode("plan")
    s.policy.add_rule("Bash")
    for name, raw in [
        ("shell", {"command": "ls"}),
        ("write_file", {"path": "a", "content": ""}),
        ("edit_file", {"path": "a", "old_string": "a", "new_string": "b"}),
    ]:
        d = s.check(name, **raw)
        assert not d.allowed and "Plan mode" in d.message, name
    assert s.check(board_tool()).allowed  # coordination tools still work


def test_bypass_mode_allows_without_asking(workdir):
    s = Setup(workdir, mode="bypassPermissions", allow_bypass=True)
    assert s.check("shell", command="rm -rf build; ls").source == "mode bypassPermissions"


def test_plan_gate_refuses_effectful_tools_but_not_plan_exempt_ones(s):
    s.gate.plan_gate = lambda agent: f"{agent}: submit a plan first" if agent == "alice" else None
    s.policy.add_rule("Bash")
    d = s.check("shell", command="ls")
    assert not d.allowed and d.message == "alice: submit a plan first" and d.source == "plan"
    assert not s.check(board_tool()).allowed
    assert s.check(board_tool(plan_exempt=True)).allowed
    assert s.check("read_file", path="a").allowed


def test_deny_rule_is_checked_before_the_plan_gate(s):
    s.gate.plan_gate = lambda agent: "plan first"
    s.policy.add_rule("Edit(secrets/**)", effect="deny")
    d = s.check("write_file", path="secrets/key", content="x")
    assert d.source == "Edit(secrets/**)"


def test_symlink_cannot_launder_a_denied_path(s):
    (s.workdir / "secrets").mkdir()
    (s.workdir / "innocent.txt").symlink_to(s.workdir / "secrets" / "key")
    s.policy.add_rule("Edit(secrets/**)", effect="deny")
    s.policy.add_rule("Edit")
    d = s.check("write_file", path="innocent.txt", content="x")
    assert not d.allowed and d.source == "Edit(secrets/**)"


def test_cancel_while_waiting_for_a_human_denies_as_interrupted(s):
    queued = threading.Event()
    s.broker.attach_ui(queued.set)
    out = []
    t = threading.Thread(target=lambda: out.append(s.check("shell", command="make")))
    t.start()
    assert queued.wait(WAIT)
    s.ctx.cancel.set()
    t.join(WAIT)
    assert not out[0].allowed and out[0].message.startswith("Interrupted")


def test_audit_lines_from_several_processes_are_whole(workdir):
    script = textwrap.dedent(
        """
        import sys
        from pathlib import Path
        from agent_cli.permissions.audit import AuditLog
        log = AuditLog(Path(sys.argv[1]))
        for i in range(50):
            log.record(agent=sys.argv[2], tool="shell", input={"command": "x" * 3000},
                       decision="deny", source="headless", feedback="")
        """
    )
    path = workdir / ".team" / "audit.jsonl"
    procs = [subprocess.Popen([sys.executable, "-c", script, str(path), f"p{n}"]) for n in range(4)]
    assert [p.wait(timeout=60) for p in procs] == [0] * 4
    lines = path.read_text().splitlines()
    assert len(lines) == 200
    parsed = [json.loads(line) for line in lines]
    assert all(p["input"]["command"] == "x" * 3000 for p in parsed)  # the whole input


@pytest.mark.parametrize(
    "path", [".agent-cli/settings.json", ".tasks/task_1.json", ".team/audit.jsonl", ".git/config"]
)
def test_writes_to_session_state_always_ask_even_with_accept_edits_and_rules(workdir, path):
    s = Setup(workdir, allow=["Edit", "Write(**)"], mode="acceptEdits")
    d = s.check("write_file", path=path, content='{"permissions": {"allow": ["Bash"]}}')
    assert not d.allowed and d.source == "headless"
    assert not (workdir / ".agent-cli" / "settings.json").exists()
    _, req = s.check_with_human(ApprovalAnswer("allow_always"), "write_file", path=path, content="")
    assert req.suggested_rule == ""  # no standing rule for these paths


def test_coordination_tools_are_allowed_without_an_audit_line(s):
    assert s.check(board_tool()).allowed
    assert s.audit_lines() == []
