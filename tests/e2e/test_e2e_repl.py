"""End to end in a pseudo-terminal: start `python -m agent_cli --model script:… -C tmpdir`,
type a prompt, answer a teammate's approval, run /tasks and /team, exit cleanly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.repl_spawn import spawn_repl

pexpect = pytest.importorskip("pexpect")

SCRIPT = {
    "lead": [
        {"text": "Planning.", "tool_calls": [
            {"name": "create_task", "input": {"subject": "say hello"}},
            {"name": "spawn_teammate", "input": {"name": "alice", "role": "tester"}}]},
        {"text": "Planned: alice takes **task 1**."},
    ],
    "alice": [
        {"text": "Running.", "tool_calls": [
            {"name": "shell", "input": {"command": "echo hello-from-alice"}}]},
        {"text": "Ran it."},  # forgot complete_task: the host reminds her twice, then
        {"text": "Ran it, really."},  # tells the lead; the task stays in progress with her
        {"text": "It printed hello."},
    ],
}


def test_prompt_approval_tables_and_clean_exit(workdir: Path) -> None:
    child = spawn_repl(workdir, SCRIPT, timeout=15)
    try:
        child.expect("Ctrl-D exits")
        child.send("plan the hello work\r")
        child.expect("wants to run")
        child.expect("echo hello-from-alice")
        child.expect("Choose 1, 2 or 3")
        child.send("2")
        child.expect(r"rule added: .*Bash\(echo hello-from-alice\)")
        child.expect("hello-from-alice")
        child.send("/tasks\r")
        child.expect(r"\[>\]")
        child.expect("say hello")
        child.expect("@alice")
        child.send("/team\r")
        child.expect("tester")
        child.send("\x04")  # Ctrl-D
        child.expect("all teammates stopped")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0
    task = json.loads((workdir / ".tasks" / "task_1.json").read_text(encoding="utf-8"))
    assert task["subject"] == "say hello"
    history = (workdir / ".agent-cli" / "history").read_text(encoding="utf-8")
    assert "plan the hello work" in history
