"""Hooks in front of MCP tools, through a real stdio MCP server in a real headless process: a
PreToolUse matcher `mcp__fx__.*` sees the call and its exit 2 refuses it even where an allow
rule would run it; a hook's `ask` makes a read-only-hinted tool ask (denied headless)."""

from __future__ import annotations

import json
from pathlib import Path

from support.hooks import Hook, configure
from test_mcp_gate import run_cli, write_config


def test_pre_tool_use_hooks_guard_mcp_tools(workdir: Path, tmp_path: Path) -> None:
    config, pidfile = tmp_path / "mcp.json", tmp_path / "pids"
    write_config(config, pidfile)
    block = Hook(tmp_path, "block", code=2, stderr="no writes through MCP today")
    ask = Hook(tmp_path, "ask", stdout={"hookSpecificOutput": {"permissionDecision": "ask"}})
    configure(workdir, {"PreToolUse": [("mcp__fx__touch", block), ("mcp__fx__echo", ask)]})
    script = {"lead": [
        {"text": "Trying.", "tool_calls": [
            {"name": "mcp__fx__touch", "input": {"path": "made.txt"}},
            {"name": "mcp__fx__echo", "input": {"text": "hi"}}]},
        {"text": "Done."}]}
    proc = run_cli(workdir, script, "--mcp-config", str(config), "-p", "go",
                   "--output-format", "json", "--allow", "mcp__fx__touch")
    assert proc.returncode == 0, proc.stderr
    assert not (workdir / "made.txt").exists()
    assert block.calls()[0]["tool_name"] == "mcp__fx__touch"
    assert block.calls()[0]["tool_input"] == {"path": "made.txt"}
    report = json.loads(proc.stdout)
    assert [(d["tool"], d["rule"]) for d in report["denials"]] == [("mcp__fx__echo", "")]
    [path] = (workdir / ".team" / "transcripts" / "sessions").glob("*/lead.jsonl")
    transcript = path.read_text()
    assert "no writes through MCP today" in transcript and "echo: hi" not in transcript
