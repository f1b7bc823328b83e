"""A Claude Code user's repository, run unchanged: the real `agent-cli -p` in a subprocess, the
official SDK talking to the wire-level stub. `git diff | agent-cli -p "/review security"`
expands the project's command (its model and tools for that turn only), the pipe reaches the
model, CLAUDE.md with an inline import and the user's ~/.claude/CLAUDE.md are in every system
prompt with the skills' names, a teammate spawned by agent type has that prompt, model and
tools, and a skill's body is loaded when the teammate asks."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from support.claude_user import claude_repo
from support.e2e_claude import answered_calls, cli_command, cli_env, system_text
from support.stub_server import Reply, StubServer, ToolUse

MODEL = "claude-sonnet-4-5"


def _respond(body: dict[str, Any]) -> Reply:
    """The lead spawns a code-reviewer and later reads its message; rev loads a skill, tells
    the lead, and stops."""
    done = [b["name"] for m in body.get("messages") or [] if m.get("role") == "assistant"
            for b in m.get("content") or [] if isinstance(b, dict) and b.get("type") == "tool_use"]
    if system_text(body).startswith("You are rev,"):
        if "skill" not in done:
            return Reply("Loading the skill.", [ToolUse("skill", {"name": "changelog"})])
        if "send_message" not in done:
            return Reply("Reviewed.", [ToolUse("send_message", {"to": "lead",
                                                                "content": "diff looks fine"})])
        return Reply("Done.")
    if not done:
        return Reply("Spawning.", [ToolUse("spawn_teammate", {
            "name": "rev", "agent_type": "code-reviewer", "prompt": "review the diff"})])
    return Reply("rev says the diff looks fine.")


def _tools(body: dict[str, Any]) -> set[str]:
    return {t["name"] for t in body.get("tools") or []}


def test_a_claude_code_users_repository_works_unchanged(tmp_path: Path) -> None:
    home = tmp_path / "home"
    work = claude_repo(tmp_path, home)
    diff = subprocess.run(["git", "diff"], cwd=work, capture_output=True, text=True).stdout
    with StubServer(responder=_respond) as stub:
        env = cli_env(stub.url, extra={"HOME": str(home), "AGENT_CLI_HOME": str(
            home / ".agent-cli"), "CLAUDE_CONFIG_DIR": str(home / ".claude")})
        proc = subprocess.run(
            [*cli_command(), "-C", str(work), "--model", MODEL, "-p", "/review security",
             "--wait", "--timeout", "60", "--idle-timeout", "0"],
            input=diff, env=env, capture_output=True, text=True, timeout=90)
        assert proc.returncode == 0, proc.stderr
        assert "Traceback" not in proc.stderr and stub.rejections == []
        bodies = [b for b in stub.requests if isinstance(b, dict) and b.get("messages")]
        rev = [b for b in bodies if system_text(b).startswith("You are rev,")]
        lead = [b for b in bodies if b not in rev]
    first, *rest = lead
    # the command's turn: its model and only its tools; the prompt, then the pipe
    assert first["model"] == "claude-haiku-4-5"
    assert _tools(first) == {"read_file", "grep", "spawn_teammate"}
    text = first["messages"][0]["content"][-1]["text"]
    assert text.startswith("Review the diff below for security issues; spawn a code-reviewer.")
    assert "<stdin>\ndiff --git a/src/app.py b/src/app.py" in text and "+print(2)" in text
    # a later lead turn (rev's message) is back on the session's model and tools
    assert rest and rest[-1]["model"] == MODEL and "create_task" in _tools(rest[-1])
    for body in (first, rev[0]):
        system = system_text(body)
        assert "Use pnpm. House style: @docs/style.md\nSTYLE-RULES" in system
        assert "USER-PREFS: British spelling." in system
        assert "- changelog: Write changelog entries" in system
        assert "Keep a Changelog, newest first." not in system  # the body waits for the tool
    # the teammate by type: identity and protocol first, then the type's prompt, model, tools
    system = system_text(rev[0])
    assert system.index("You are rev,") < system.index("You review code. Never edit files.")
    assert rev[0]["model"] == "claude-opus-4-1"
    tools = _tools(rev[0])
    assert {"read_file", "grep", "skill", "send_message", "complete_task"} <= tools
    assert not tools & {"shell", "write_file", "edit_file"}
    [(name, result)] = [c for c in answered_calls(rev[1]) if c[0] == "skill"]
    assert "Keep a Changelog, newest first." in str(result)
