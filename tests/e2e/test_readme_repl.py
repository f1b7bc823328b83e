"""The README's demo prompts typed into the real REPL in a pseudo-terminal (pexpect) — prompt 1,
and prompt 6 after prompt 5 in one session: approvals are answered with the keys the README
names, and /tasks is read off the screen.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path

import pytest

pexpect = pytest.importorskip("pexpect")

README = Path(__file__).resolve().parents[2] / "README.md"
PROMPT_BLOCK_RE = re.compile(r"^```prompt\n(.*?)\n```$", re.MULTILINE | re.DOTALL)
ANSI_RE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[()][0-9A-B]|\x1b[=>]|\r")


class Screen:
    """What the terminal showed, without escape sequences; `expect` waits on the pty itself."""

    def __init__(self, child) -> None:
        self.child = child
        self.raw = ""
        self.pos = 0

    def text(self) -> str:
        return ANSI_RE.sub("", self.raw)

    def expect(self, pattern: str, timeout: float = 30.0) -> re.Match[str]:
        rx = re.compile(pattern, re.DOTALL)
        deadline = time.monotonic() + timeout
        while True:
            m = rx.search(self.text(), self.pos)
            if m:
                self.pos = m.end()
                return m
            left = deadline - time.monotonic()
            if left <= 0:
                pytest.fail(f"never saw {pattern!r}; the screen ended with:\n"
                            f"{self.text()[-2500:]}")
            try:
                self.raw += self.child.read_nonblocking(65536, timeout=min(left, 1.0))
            except pexpect.TIMEOUT:
                pass
            except pexpect.EOF:
                pytest.fail(f"agent-cli exited while waiting for {pattern!r}:\n"
                            f"{self.text()[-2500:]}")


def first_prompt() -> str:
    return PROMPT_BLOCK_RE.findall(README.read_text(encoding="utf-8"))[0].strip()


def test_prompt_1_in_the_repl_with_approvals_answered_by_keys(workdir):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.pop("AGENT_CLI_MODEL", None)
    env.update(PATH=str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", ""),
               PROMPT_TOOLKIT_NO_CPR="1", TERM="xterm-256color")
    child = pexpect.spawn(sys.executable, ["-m", "agent_cli", "--model", "demo", "-C",
                                           str(workdir)],
                          env=env, dimensions=(40, 140), encoding="utf-8", timeout=30)
    try:
        screen = Screen(child)
        screen.expect("offline demo model")
        screen.expect(">")
        child.send(first_prompt() + "\r")
        asked = []
        for _ in range(2):  # hello.txt is written, `python --version` runs: both ask
            asked.append(screen.expect(r"(\w+) wants to (run|write)").group(2))
            screen.expect("Choose 1, 2 or 3:")
            child.send("1")
        assert sorted(asked) == ["run", "write"]
        screen.expect("all 3 tasks completed")
        child.send("/tasks\r")
        table = screen.expect(r"\[x\][^\n]*\n\[x\][^\n]*\n\[x\][^\n]*").group(0)
        assert "@alice" in table and "@bob" in table
        assert (workdir / "hello.txt").read_text() == "Hello from the team.\n"
        child.send("/quit\r")
        child.expect(pexpect.EOF, timeout=30)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0


def readme_prompt(number: int) -> str:
    return PROMPT_BLOCK_RE.findall(README.read_text(encoding="utf-8"))[number - 1].strip()


def test_prompt_6_after_prompt_5_in_the_same_repl(workdir):
    """reader and reviewer sit idle after prompt 5; prompt 6's task is writer's (assigned, plan
    required), so only writer takes it, plans it, and writes NOTES.md when you press 1."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.pop("AGENT_CLI_MODEL", None)
    env.update(PATH=str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", ""),
               PROMPT_TOOLKIT_NO_CPR="1", TERM="xterm-256color")
    (workdir / "NOTES.md").write_text("# Notes\n")
    child = pexpect.spawn(sys.executable, ["-m", "agent_cli", "--model", "demo", "-C",
                                           str(workdir)],
                          env=env, dimensions=(40, 140), encoding="utf-8", timeout=30)
    try:
        screen = Screen(child)
        screen.expect("offline demo model")
        screen.expect(">")
        child.send(readme_prompt(5) + "\r")
        while True:  # writes of main.py / expected.txt, then `python main.py`: 2 = always
            m = screen.expect(r"Choose 1, 2 or 3:|all 3 tasks completed", timeout=60)
            if m.group(0).startswith("all"):
                break
            child.send("2")
        child.send(readme_prompt(6) + "\r")
        screen.expect(r"writer wants to write `?NOTES\.md", timeout=60)
        screen.expect("Choose 1, 2 or 3:")
        child.send("1")
        screen.expect("all 4 tasks completed", timeout=60)
        child.send("/tasks\r")
        row = screen.expect(r"\[x\][^\n]*Add a line to NOTES\.md[^\n]*").group(0)
        assert "@writer" in row and "+plan" in row
        child.send("/quit\r")
        child.expect(pexpect.EOF, timeout=30)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0
    assert (workdir / "NOTES.md").read_text() == "# Notes\nReviewed by the team.\n"
    log = [json.loads(line) for line in (workdir / ".tasks" / "events.jsonl").read_text()
           .splitlines()]
    assert [e["actor"] for e in log if e["action"] == "claimed" and e["task_id"] == 4] == [
        "writer"]  # nobody else ever held it
