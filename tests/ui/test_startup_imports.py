"""The first prompt does not wait for what it does not show: the real REPL in a
pseudo-terminal records `sys.modules` when its first prompt has been drawn (prompt_toolkit's
after_render event), then exits; none of the heavy modules below may be in it by then.
(bench/startup.py prints how long start-up takes; this test only says what it loads.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pexpect = pytest.importorskip("pexpect")

# Each is loaded when first needed, never for the first prompt.
HEAVY = (
    "anthropic",  # the Claude SDK: at the first request
    "httpx",
    "mcp",  # the MCP SDK: only when servers are configured
    "tree_sitter",  # the shell parser: when a command or a Bash rule is judged
    "tree_sitter_bash",
    "filelock",  # at the first lock taken
    "agent_cli.agent",  # the agent engine: the lead is built once the prompt is on screen
    "agent_cli.models.base",  # the message models (pydantic), with the model adapter
    "agent_cli.models.demo",
    "agent_cli.models.anthropic",
    "agent_cli.pricing",
    "agent_cli.team.teammate",  # at the first spawn
    "agent_cli.team.team_tools",
    "agent_cli.team.board_tools",
    "agent_cli.tools.base",  # the tools' input models
    "agent_cli.memory",  # AGENTS.md / CLAUDE.md: read for the lead's first turn
    "rich.table",  # the slash commands' tables
    # The stores' models: built at the first read of a store (runtime.py). A workdir with no
    # board, team or mail builds none for its first prompt (team/state_probe.py).
    "pydantic",
    "pydantic_core",
    "agent_cli.board.models",
    "agent_cli.board.store",
    "agent_cli.board.inputs",
    "agent_cli.board.eventlog",
    "agent_cli.board.verify_authors",  # the one-time state migration, only with task files
    "agent_cli.team.roster",
    "agent_cli.team.mailbox",
    "agent_cli.team.protocol",
    "agent_cli.agent.transcript",
)

# Runs the real entry point; when the first prompt has been drawn, writes the loaded modules
# to argv[1] and ends the prompt as Ctrl-D would.
LAUNCHER = """
import json, runpy, sys
from agent_cli.ui.repl import Repl
out, pre_run = sys.argv[1], Repl._pre_run
def first_prompt(self):
    app = self.session.app
    def drawn(_):
        app.after_render -= drawn
        with open(out, "w") as fh:
            json.dump(sorted(sys.modules), fh)
        app.exit(exception=EOFError())
    app.after_render += drawn
    pre_run(self)
Repl._pre_run = first_prompt
sys.argv = ["agent-cli"] + sys.argv[2:]
runpy.run_module("agent_cli", run_name="__main__")
"""


def loaded_at_first_prompt(workdir: Path, *args: str, env: dict[str, str] | None = None
                           ) -> set[str]:
    out = workdir.parent / "modules.json"
    base = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC")}
    base.update({"TERM": "xterm-256color", "PROMPT_TOOLKIT_NO_CPR": "1"}, **(env or {}))
    child = pexpect.spawn(sys.executable, ["-c", LAUNCHER, str(out), "-C", str(workdir), *args],
                          env=base, dimensions=(40, 120), encoding="utf-8", timeout=60)
    try:
        child.expect("Ctrl-D exits")  # the banner, then the prompt
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0, child.before
    return set(json.loads(out.read_text(encoding="utf-8")))


def heavy_in(modules: set[str]) -> list[str]:
    return [h for h in HEAVY if any(m == h or m.startswith(h + ".") for m in modules)]


def test_demo_model_in_a_plain_directory(workdir: Path) -> None:
    modules = loaded_at_first_prompt(workdir, "--model", "demo")
    assert "prompt_toolkit" in modules and "agent_cli.ui.repl" in modules
    assert not heavy_in(modules), f"loaded before the first prompt: {heavy_in(modules)}"


def test_claude_model_in_a_git_repository(workdir: Path) -> None:
    subprocess.run(["git", "init", "-q", str(workdir)], check=True)
    (workdir / "a.txt").write_text("a\n", encoding="utf-8")
    env = {"ANTHROPIC_API_KEY": "sk-test-never-sent", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}
    modules = loaded_at_first_prompt(workdir, "--model", "claude-sonnet-4-5", env=env)
    assert "agent_cli.gitrepo" in modules  # the banner says whether tasks get worktrees
    assert not heavy_in(modules), f"loaded before the first prompt: {heavy_in(modules)}"

