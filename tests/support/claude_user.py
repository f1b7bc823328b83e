"""A Claude Code user's world for tests: a fake HOME with ~/.claude/, a workdir with .claude/,
and `agent-cli -p` run on it as a process against the scripted model (no network, no key)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from .cli import cli_env


def write(path: Path, text: str) -> Path:
    """Write `text` to `path`, creating its folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def put_json(path: Path, data: Any) -> None:
    """Write `data` as JSON to `path` (a settings file), creating its folders."""
    write(path, json.dumps(data))


def run_p(workdir: Path, home: Path, script: dict[str, Any], *args: str,
          stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """`agent-cli -C workdir --model script:FILE ARGS` with HOME=home; `stdin`: piped text
    (None: /dev/null, as a run with nothing piped)."""
    path = workdir.parent / "script.json"
    path.write_text(json.dumps(script), encoding="utf-8")
    env = cli_env(HOME=str(home), AGENT_CLI_HOME=str(home / ".agent-cli"),
                  CLAUDE_CONFIG_DIR=str(home / ".claude"))
    return subprocess.run(
        [sys.executable, "-m", "agent_cli", "-C", str(workdir), "--model", f"script:{path}",
         *args], env=env, input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True, text=True, timeout=60)


def transcript(workdir: Path, agent: str = "lead") -> list[dict[str, Any]]:
    """The messages of `agent` in the one session the run made."""
    [path] = (workdir / ".team" / "transcripts" / "sessions").glob(f"*/{agent}.jsonl")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [r["message"] for r in rows if r.get("kind") == "message"]


def user_texts(workdir: Path, agent: str = "lead") -> list[str]:
    """The text blocks the model received from the user side, in order."""
    texts = []
    for message in transcript(workdir, agent):
        if message["role"] != "user" or isinstance(message["content"], str):
            continue
        texts += [b["text"] for b in message["content"] if b.get("type") == "text"]
    return texts


def claude_repo(root: Path, home: Path) -> Path:
    """`root/work` laid out as a Claude Code user's repository (CLAUDE.md with an import, a
    command, an agent definition, a skill; committed, then src/app.py changed) and the
    user's ~/.claude/CLAUDE.md under `home`."""
    work = root / "work"
    write(work / "src/app.py", "print(1)\n")
    write(work / "CLAUDE.md", "Use pnpm. House style: @docs/style.md\n")
    write(work / "docs/style.md", "STYLE-RULES: short functions.\n")
    write(work / ".claude/commands/review.md",
          "---\ndescription: Review a diff\nmodel: haiku\n"
          "allowed-tools: Read, Grep, spawn_teammate\n---\n"
          "Review the diff below for $ARGUMENTS issues; spawn a code-reviewer.\n")
    write(work / ".claude/agents/code-reviewer.md",
          "---\nname: code-reviewer\ndescription: Reviews diffs for bugs\n"
          "tools: Read, Grep\nmodel: opus\n---\nYou review code. Never edit files.\n")
    write(work / ".claude/skills/changelog/SKILL.md",
          "---\ndescription: Write changelog entries\n---\nKeep a Changelog, newest first.\n")
    write(home / ".claude/CLAUDE.md", "USER-PREFS: British spelling.\n")
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=u", "-c", "user.email=u@x",
                                                 "commit", "-qm", "init"]):
        subprocess.run(["git", *args], cwd=work, check=True)
    write(work / "src/app.py", "print(2)\n")
    return work
