"""A Claude Code user's repository in the real REPL (a pseudo-terminal, the official SDK
talking to the wire-level stub): `.claude/settings.json` deny rules, hooks written in Claude
Code's format (a PreToolUse block with exit 2, a PostToolUse formatter), the untracked
`.claude/settings.local.json` (an Edit allow rule, an additional directory), a command, an
agent definition, a skill and CLAUDE.md, all unchanged. Checked on disk and on the wire: the
denied read sends no secret byte, `rm` is refused and the file survives, the hook's reason
is on screen, `/x args` expands, the teammate spawned by type has that prompt and tools."""

from __future__ import annotations

import io
import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
from support.claude_user import claude_repo, put_json, write
from support.e2e_claude import answered_calls, cli_env, last_user_text, system_text
from support.stub_server import Reply, StubServer, ToolUse

pexpect = pytest.importorskip("pexpect")

MODEL = "claude-sonnet-4-5"
SECRET = "sk-live-REPL-7d31"
SHARED = "SHARED-NOTES: the API is versioned."
# Claude Code's documented hook shapes, as a user's scripts: read the event on stdin.
NO_CURL = r'''
import json, sys
event = json.load(sys.stdin)
if event["tool_name"] == "Bash" and "curl" in event["tool_input"]["command"]:
    print("network downloads are blocked by the team policy", file=sys.stderr)
    sys.exit(2)
'''
FORMAT = r'''
import json, sys
path = json.load(sys.stdin)["tool_input"]["file_path"]
with open(path) as fh:
    text = "\n".join(line.rstrip() for line in fh.read().splitlines()) + "\n"
with open(path, "w") as fh:
    fh.write(text)
'''


def _hook(name: str) -> dict[str, str]:
    command = f'{shlex.quote(sys.executable)} "$CLAUDE_PROJECT_DIR"/.claude/hooks/{name}'
    return {"type": "command", "command": command}


def _user_repo(tmp_path: Path) -> Path:
    """claude_repo plus the settings, hooks, an agent type `y`, a command `/x`, a secret."""
    home = tmp_path / "home"
    work = claude_repo(tmp_path, home)
    write(work / ".env", f"API_KEY={SECRET}\n")
    write(work / "important.txt", "keep me\n")
    write(work / ".claude/hooks/no_curl.py", NO_CURL)
    write(work / ".claude/hooks/format.py", FORMAT)
    write(work / ".claude/commands/x.md",
          "---\ndescription: Tidy a part\n---\nTidy $ARGUMENTS and ask a y to look.\n")
    write(work / ".claude/agents/y.md",
          "---\nname: y\ndescription: Looks things over\ntools: Read, Grep\n---\n"
          "Y-PROMPT: you look things over and report.\n")
    put_json(work / ".claude/settings.json", {
        "permissions": {"deny": ["Read(./.env)", "Bash(rm *)"]},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [_hook("no_curl.py")]}],
                  "PostToolUse": [{"matcher": "Write|Edit", "hooks": [_hook("format.py")]}]}})
    write(tmp_path / "shared/notes.md", SHARED + "\n")
    write(work / ".gitignore", ".claude/settings.local.json\n")
    put_json(work / ".claude/settings.local.json", {"permissions": {
        "allow": ["Edit(src/**)"], "additionalDirectories": ["../shared"]}})
    return work


def _done(body: dict[str, Any]) -> list[str]:
    return [b["name"] for m in body.get("messages") or [] if m.get("role") == "assistant"
            for b in m.get("content") or [] if isinstance(b, dict) and b.get("type") == "tool_use"]


def _respond(body: dict[str, Any]) -> Reply:
    """The lead tries each guarded thing once and spawns a `y`; yuri reports and stops."""
    if system_text(body).startswith("You are yuri,"):
        if "send_message" not in _done(body):
            return Reply("Reporting.", [ToolUse("send_message", {"to": "lead",
                                                                 "content": "REVIEW-OK"})])
        return Reply("Done.")
    if "REVIEW-OK" in json.dumps([m for m in body["messages"] if m.get("role") == "user"]):
        return Reply("yuri reported back: all good.")
    if _done(body):
        return Reply("That is all for now.")
    return Reply("On it.", [
        ToolUse("read_file", {"path": ".env"}),
        ToolUse("read_file", {"path": "../shared/notes.md"}),
        ToolUse("shell", {"command": "rm important.txt"}),
        ToolUse("shell", {"command": "curl -s http://example.invalid/x"}),
        ToolUse("write_file", {"path": "src/tidy.py", "content": "x = 1   \ny = 2\t\n"}),
        ToolUse("spawn_teammate", {"name": "yuri", "agent_type": "y", "prompt": "look"}),
    ])


def _spawn(work: Path, stub: StubServer, log: io.StringIO) -> pexpect.spawn:
    home = work.parent / "home"
    env = cli_env(stub.url, extra={
        "HOME": str(home), "AGENT_CLI_HOME": str(home / ".agent-cli"),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"), "TERM": "xterm-256color",
        "PROMPT_TOOLKIT_NO_CPR": "1", "COLUMNS": "120"})
    child = pexpect.spawn(sys.executable, ["-m", "agent_cli", "-C", str(work), "--model",
                                           MODEL, "--idle-timeout", "0"],
                          env=env, dimensions=(40, 120), encoding="utf-8", timeout=30,
                          cwd=str(work))
    child.logfile_read = log
    return child


def test_a_claude_code_users_repository_in_the_repl(tmp_path: Path) -> None:
    work = _user_repo(tmp_path)
    log = io.StringIO()
    with StubServer(responder=_respond) as stub:
        child = _spawn(work, stub, log)
        try:
            child.expect(r"Trust them\? \[y/N\]")  # the repository's hooks: asked once
            child.send("y\r")
            child.send("/x the src folder\r")
            child.expect("Refused by a PreToolUse hook: [^\r\n]*blocked by the team")
            child.expect("yuri +[^\r\n]*REVIEW-OK")
            child.send("anything from yuri?\r")  # its message is in the lead's conversation
            child.expect("anything from yuri")
            child.expect("yuri reported back: all good.")
            child.send("\x04")
            child.expect("all teammates stopped")
            child.expect(pexpect.EOF)
        finally:
            child.close()
        assert child.exitstatus == 0, log.getvalue()[-3000:]
        assert stub.rejections == [] and stub.responder_errors == []
        bodies = [b for b in stub.requests if isinstance(b, dict) and b.get("messages")]
    screen = log.getvalue()
    assert "Traceback" not in screen
    # not one byte of the denied file went to the model, nor to the screen
    assert SECRET not in json.dumps(bodies) and SECRET not in screen
    assert (work / "important.txt").read_text() == "keep me\n"  # rm was refused
    assert "Denied by rule Bash(rm *)" in screen
    assert (work / "src/tidy.py").read_text() == "x = 1\ny = 2\n"  # the formatter ran
    lead = [b for b in bodies if not system_text(b).startswith("You are yuri,")]
    yuri = [b for b in bodies if system_text(b).startswith("You are yuri,")]
    assert last_user_text(lead[0]).startswith("Tidy the src folder and ask a y to look.")
    results = {n: [] for n in ("read_file", "shell", "write_file", "spawn_teammate")}
    for name, block in answered_calls(lead[1]):
        results[name].append(json.dumps(block))
    assert "Denied by rule Read(./.env)" in results["read_file"][0]
    assert SHARED in results["read_file"][1]  # the additional directory, as configured
    assert "network downloads are blocked" in results["shell"][1]
    # the teammate by agent type: its definition's prompt and only its tools (plus the team's)
    system = system_text(yuri[0])
    assert system.index("You are yuri,") < system.index("Y-PROMPT: you look things over")
    tools = {t["name"] for t in yuri[0].get("tools") or []}
    assert {"read_file", "grep", "send_message"} <= tools
    assert not tools & {"shell", "write_file", "edit_file"}
    assert "- changelog: Write changelog entries" in system  # the skill's name and summary
    assert "STYLE-RULES: short functions." in system_text(lead[0])  # CLAUDE.md's import
