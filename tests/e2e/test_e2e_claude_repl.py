"""The REPL on the Claude path, in a pseudo-terminal: `python -m agent_cli --model claude-x`
with ANTHROPIC_BASE_URL pointing at the wire-level stub. A typed prompt makes the lead (the
stub) create a task and spawn alice; alice's shell command waits for the human, who answers
1 (allow once); the task completes; /tasks shows it; Ctrl-D exits cleanly.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from support.e2e_claude import TeamScript, cli_env, make_project
from support.stub_server import StubServer

pexpect = pytest.importorskip("pexpect")

MODEL = "claude-x"
ANSI = r"(?:\x1b\[[0-9;]*m)*"  # colour codes between words


def spawn_repl(workdir: Path, stub: StubServer, api_key: str = "test") -> pexpect.spawn:
    env = cli_env(
        stub.url,
        api_key,
        {
            "TERM": "xterm-256color",
            "PROMPT_TOOLKIT_NO_CPR": "1",
            "COLUMNS": "120",
        },
    )
    return pexpect.spawn(
        sys.executable,
        ["-m", "agent_cli", "-C", str(workdir), "--model", MODEL, "--idle-timeout", "0"],
        env=env,
        dimensions=(40, 120),
        encoding="utf-8",
        timeout=20,
        cwd=str(workdir),
    )


def test_repl_runs_the_team_through_the_sdk_with_one_approval(workdir: Path) -> None:
    make_project(workdir)
    script = TeamScript(with_verify_task=False)
    with StubServer(responder=script) as stub:
        child = spawn_repl(workdir, stub)
        try:
            child.expect(rf"model {ANSI}{MODEL}")
            banner = child.before
            child.expect("Ctrl-D exits")
            assert "offline demo" not in banner + child.before
            child.send("Run main.py with a teammate\r")
            child.expect("wants to run")
            child.expect("python main.py")
            child.expect("Choose 1, 2 or 3")
            child.send("1")
            child.expect(r"completed #1")
            child.send("/tasks\r")
            child.expect(r"\[x\]")
            child.expect("run main.py")
            child.expect("@alice")
            child.send("\x04")  # Ctrl-D
            child.expect("all teammates stopped")
            child.expect(pexpect.EOF)
        finally:
            child.close()
        assert child.exitstatus == 0
        assert stub.rejections == [] and stub.responder_errors == []
    task = json.loads((workdir / ".tasks" / "task_1.json").read_text(encoding="utf-8"))
    assert (task["status"], task["owner"], task["result"]) == (
        "completed",
        "alice",
        "ran python main.py: 42",
    )
    assert (workdir / "runs.log").read_text(encoding="utf-8") == "ran\n"


def test_repl_shows_a_rejected_key_as_one_error_line(workdir: Path) -> None:
    with StubServer(responder=TeamScript(), api_key="the-right-key") as stub:
        child = spawn_repl(workdir, stub, api_key="wrong-key")
        try:
            child.expect("Ctrl-D exits")
            child.send("hello\r")
            child.expect(r"error \(auth\): [^\r\n]*401")
            child.send("\x04")
            child.expect(pexpect.EOF)
        finally:
            child.close()
        screen = child.before or ""
        assert "Traceback" not in screen
        assert child.exitstatus == 0
        assert len(stub.requests) == 1  # not retried
