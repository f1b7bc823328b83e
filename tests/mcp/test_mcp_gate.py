"""MCP tools behind the permission gate: read-only hints run, everything else asks, rules
`mcp__server`, `mcp__server__*` and `mcp__server__tool` allow and deny (deny wins), headless
denies; the effect on disk is what is checked. Then the lead and a teammate calling them in a
real headless process, and untrusted project servers that never start."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from agent_cli.mcp.config import parse_servers
from agent_cli.mcp.manager import McpManager
from agent_cli.permissions.audit import AuditLog
from agent_cli.permissions.broker import HEADLESS, ApprovalAnswer, ApprovalBroker
from agent_cli.permissions.gate import PermissionGate
from agent_cli.permissions.policy import PermissionPolicy
from agent_cli.permissions.rules import InvalidRule, parse_rule
from agent_cli.tools.base import ToolContext
from agent_cli.ui.approvals import headline

SERVER = str(Path(__file__).parents[1] / "support" / "mcp_server.py")
WAIT = 10.0


@pytest.fixture(scope="module")
def mcp_tools(tmp_path_factory):
    home = tmp_path_factory.mktemp("mcp")
    specs = parse_servers({"fx": {"command": sys.executable, "args": [SERVER]}}, "flag", "t",
                          os.environ)
    m = McpManager(home, specs)
    m.start()
    assert m.wait_ready(30), m.describe()
    yield {t.name: t for t in m.tools()}
    m.close()


class Gate:
    def __init__(self, workdir: Path, **policy_kw) -> None:
        self.policy = PermissionPolicy(workdir, **policy_kw)
        self.broker = ApprovalBroker()
        self.audit = AuditLog(workdir / ".team" / "audit.jsonl")
        self.gate = PermissionGate(self.policy, self.broker, self.audit)
        self.ctx = ToolContext(agent="alice", workdir=workdir)

    def call(self, tool, raw: dict, answer: ApprovalAnswer | None = None):
        """(decision, request or None). With `answer`, a human answers on this thread."""
        args = tool.parse(raw)
        if answer is None:
            self.broker.attach_ui()
            out = []
            t = threading.Thread(target=lambda: out.append(self.gate.check(tool, args, self.ctx)))
            t.start()
            t.join(WAIT)
            assert not t.is_alive(), "the gate asked a human"
            return out[0], None
        self.broker.attach_ui()
        out = []
        t = threading.Thread(target=lambda: out.append(self.gate.check(tool, args, self.ctx)))
        t.start()
        req = self.broker.next_request(timeout=WAIT)
        assert req is not None, "the gate did not ask"
        self.broker.answer(req.id, answer)
        t.join(WAIT)
        return out[0], req

    def run(self, tool, raw: dict, answer: ApprovalAnswer | None = None):
        decision, req = self.call(tool, raw, answer)
        if decision.allowed:
            return tool.run(tool.parse(raw), self.ctx), req
        return None, req


def test_mcp_rules_parse_and_bad_ones_are_one_line() -> None:
    assert parse_rule("mcp__github").matches("Mcp", "mcp__github__create_issue")
    assert parse_rule("mcp__github__*").matches("Mcp", "mcp__github__list")
    exact = parse_rule("mcp__github__list")
    assert exact.matches("Mcp", "mcp__github__list")
    assert not exact.matches("Mcp", "mcp__github__listx")
    assert not parse_rule("mcp__git").matches("Mcp", "mcp__github__list")
    assert not parse_rule("mcp__github").matches("Bash", "mcp__github__list")
    with pytest.raises(InvalidRule, match="MCP rules are"):
        parse_rule("mcp__bad name")


def test_read_only_hint_runs_without_asking_even_in_plan_mode(workdir, mcp_tools) -> None:
    g = Gate(workdir, mode="plan")
    out, _ = g.run(mcp_tools["mcp__fx__echo"], {"text": "hi"})
    assert out.content == "echo: hi"


def test_effectful_tool_asks_with_server_tool_and_arguments(workdir, mcp_tools) -> None:
    g = Gate(workdir)
    target = workdir / "asked.txt"
    out, req = g.run(mcp_tools["mcp__fx__touch"], {"path": str(target)},
                     ApprovalAnswer("allow_once"))
    assert target.read_text(encoding="utf-8") == "made by mcp"
    assert "MCP server fx · tool touch" in req.preview and str(target) in req.preview
    assert req.suggested_rule == "mcp__fx__touch"
    assert headline(req).plain == "alice wants to call `mcp__fx__touch`"
    denied = workdir / "denied.txt"
    out, _ = g.run(mcp_tools["mcp__fx__touch"], {"path": str(denied)}, ApprovalAnswer("deny"))
    assert out is None and not denied.exists()
    records = [(r["tool"], r["decision"]) for r in g.audit.entries()]
    assert records == [("mcp__fx__touch", "allow"), ("mcp__fx__touch", "deny")]


@pytest.mark.parametrize("allow, deny, runs", [
    (["mcp__fx"], [], True),
    (["mcp__fx__*"], [], True),
    (["mcp__fx__touch"], [], True),
    (["mcp__fx__echo"], [], None),          # another tool's rule: asks
    (["mcp__fx"], ["mcp__fx__touch"], False),
    (["mcp__fx__touch"], ["mcp__fx__*"], False),
    (["mcp__fx__touch"], ["mcp__fx"], False),
    (["Bash"], [], None),                   # shell rules say nothing about MCP
])
def test_rules_decide_and_deny_wins(workdir, mcp_tools, allow, deny, runs) -> None:
    g = Gate(workdir, allow=allow, deny=deny)
    target = workdir / "ruled.txt"
    if runs is None:
        _, req = g.run(mcp_tools["mcp__fx__touch"], {"path": str(target)}, HEADLESS)
        assert req is not None and not target.exists()
        return
    out, _ = g.run(mcp_tools["mcp__fx__touch"], {"path": str(target)})
    assert target.exists() == runs
    assert (out is not None) == runs


def test_deny_rule_stops_a_read_only_tool_too(workdir, mcp_tools) -> None:
    g = Gate(workdir, deny=["mcp__fx__echo"])
    out, _ = g.run(mcp_tools["mcp__fx__echo"], {"text": "x"})
    assert out is None


# ----- the whole program, headless ---------------------------------------------------------
def run_cli(workdir: Path, script: dict, *args: str, timeout: float = 90):
    path = workdir.parent / "script.json"
    path.write_text(json.dumps(script), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC")}
    return subprocess.run(
        [sys.executable, "-m", "agent_cli", "--model", f"script:{path}", "-C", str(workdir),
         *args], capture_output=True, text=True, timeout=timeout, env=env)


def write_config(path: Path, pidfile: Path) -> None:
    path.write_text(json.dumps({"mcpServers": {"fx": {
        "command": sys.executable, "args": [SERVER],
        "env": {"FIXTURE_PIDFILE": str(pidfile)}}}}), encoding="utf-8")


def test_lead_and_teammate_call_mcp_tools_headless(workdir: Path, tmp_path: Path) -> None:
    config, pidfile = tmp_path / "mcp.json", tmp_path / "pids"
    write_config(config, pidfile)
    script = {
        "lead": [
            {"text": "Checking.", "tool_calls": [
                {"name": "mcp__fx__echo", "input": {"text": "from lead"}},
                {"name": "spawn_teammate", "input": {"name": "alice", "role": "maker",
                                                     "prompt": "make allowed.txt"}}]},
            {"text": "alice has it."},
            {"text": "alice reported."},
            {"text": "All quiet."},
        ],
        "alice": [
            {"text": "Making.", "tool_calls": [
                {"name": "mcp__fx__touch", "input": {"path": "allowed.txt"}},
                {"name": "mcp__fx__crash", "input": {}},
                {"name": "mcp__fx__echo", "input": {"text": "still up"}}]},
            {"text": "made it", "tool_calls": [
                {"name": "send_message", "input": {"to": "lead", "content": "made it"}}]},
            {"text": "finished"},
        ],
    }
    proc = run_cli(workdir, script, "--mcp-config", str(config), "-p", "go", "--wait",
                   "--timeout", "60", "--output-format", "json",
                   "--allow", "mcp__fx__touch", "--deny", "mcp__fx__crash")
    assert proc.returncode == 0, proc.stderr
    assert (workdir / "allowed.txt").read_text(encoding="utf-8") == "made by mcp"
    transcripts = workdir / ".team" / "transcripts"
    assert "echo: from lead" in _session_lead(workdir).read_text(encoding="utf-8")
    alice = (transcripts / "alice.jsonl").read_text(encoding="utf-8")
    assert "Denied by rule mcp__fx__crash" in alice
    assert "echo: still up" in alice  # the denied crash never reached the server
    pids = [int(x) for x in pidfile.read_text().split()]
    assert pids and not any(Path(f"/proc/{p}").exists() for p in pids)  # nothing left behind


def test_headless_denies_effectful_mcp_calls_without_a_rule(workdir: Path,
                                                            tmp_path: Path) -> None:
    config, pidfile = tmp_path / "mcp.json", tmp_path / "pids"
    write_config(config, pidfile)
    script = {"lead": [
        {"text": "Trying.", "tool_calls": [
            {"name": "mcp__fx__touch", "input": {"path": "nope.txt"}}]},
        {"text": "It was denied."}]}
    proc = run_cli(workdir, script, "--mcp-config", str(config), "-p", "go",
                   "--output-format", "json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert not (workdir / "nope.txt").exists()
    assert [(d["agent"], d["tool"]) for d in report["denials"]] == [("lead", "mcp__fx__touch")]


def test_untrusted_project_servers_do_not_start_headless(workdir: Path, tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    write_config(workdir / ".mcp.json", pidfile)
    script = {"lead": [{"text": "Hello."}]}
    proc = run_cli(workdir, script, "-p", "hi")
    assert proc.returncode == 0, proc.stderr
    assert "not started (not trusted): fx" in proc.stderr
    assert not pidfile.exists()
    # Naming the file on the command line is the user's say-so.
    script = {"lead": [{"text": "Calling.", "tool_calls": [
        {"name": "mcp__fx__echo", "input": {"text": "trusted"}}]}, {"text": "ok"}]}
    proc = run_cli(workdir, script, "--mcp-config", str(workdir / ".mcp.json"), "-p", "hi")
    assert proc.returncode == 0, proc.stderr
    assert pidfile.exists()
    assert "echo: trusted" in _session_lead(workdir).read_text()


def _session_lead(workdir: Path) -> Path:
    """The lead's transcript of the latest run's session (.team/transcripts/sessions/; the ids
    sort by start time)."""
    paths = (workdir / ".team" / "transcripts" / "sessions").glob("*/lead.jsonl")
    return max(paths, key=lambda p: p.parent.name)
