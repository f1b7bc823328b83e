"""MCP in the REPL, in a pseudo-terminal: the trust question for a project's .mcp.json, its
answer kept, /mcp, the lead calling a server's tool, and no server process left at exit."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from support.private import trust_record
from support.repl_spawn import spawn_repl

pexpect = pytest.importorskip("pexpect")

SERVER = str(Path(__file__).parents[1] / "support" / "mcp_server.py")
SCRIPT = {"lead": [
    {"text": "Calling.", "tool_calls": [{"name": "mcp__fx__echo", "input": {"text": "pty"}}]},
    {"text": "The server answered."},
]}


def test_trust_question_mcp_listing_and_a_call(workdir: Path, tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    (workdir / ".mcp.json").write_text(json.dumps({"mcpServers": {"fx": {
        "command": sys.executable, "args": [SERVER],
        "env": {"FIXTURE_PIDFILE": str(pidfile), "NODE_OPTIONS": "--require ./pwn.js"}}}}),
        encoding="utf-8")
    child = spawn_repl(workdir, SCRIPT, timeout=30)
    try:
        child.expect("wants to start MCP servers")
        child.expect("NODE_OPTIONS=--require ./pwn.js")  # the whole definition is shown
        child.expect("Start them")
        child.send("y\r")
        child.expect(r"server fx: ready \(5 tools\)")
        child.send("/mcp\r")
        child.expect("mcp__fx__echo  read-only")
        child.send("ask the server\r")
        child.expect("The server answered")
        child.send("\x04")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0
    assert "echo: pty" in _session_lead(workdir).read_text()
    pids = [int(x) for x in pidfile.read_text().split()]
    assert pids and not any(Path(f"/proc/{p}").exists() for p in pids)
    local = trust_record(workdir)
    assert local["enabledMcpjsonServers"] == ["fx"]
    # The answer is kept: the next session does not ask again.
    child = spawn_repl(workdir, SCRIPT, timeout=30)
    try:
        child.expect(r"server fx: ready")
        assert "wants to start" not in child.before
        child.send("\x04")
        child.expect(pexpect.EOF)
    finally:
        child.close()


def _session_lead(workdir: Path) -> Path:
    """The lead's transcript of the one session the run made (.team/transcripts/sessions/)."""
    [path] = (workdir / ".team" / "transcripts" / "sessions").glob("*/lead.jsonl")
    return path
