"""README prompt 6 in a real terminal (tmux): the lead reviews writer's plan by itself, the
write asks the human, `3` plus feedback denies it; the screen shows the question once, with
the answer, and NOTES.md is unchanged. Read off `tmux capture-pane`, as a user reads it."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")

PROMPT_6 = "Spawn writer with plan approval: she adds a line to NOTES.md"


class Tmux:
    def __init__(self, command: str, width: int = 130, height: int = 45) -> None:
        self.name = f"agent-cli-test-{uuid.uuid4().hex[:8]}"
        subprocess.run(
            [
                "tmux",
                "new-session",
                "-d",
                "-s",
                self.name,
                "-x",
                str(width),
                "-y",
                str(height),
                command,
            ],
            check=True,
        )

    def screen(self) -> str:
        """The whole scrollback, as the terminal shows it."""
        out = subprocess.run(
            ["tmux", "capture-pane", "-p", "-S", "-", "-t", self.name],
            capture_output=True,
            text=True,
        )
        return out.stdout

    def wait_for(self, needle: str, timeout: float = 30.0) -> str:
        # A terminal has no condition to wait on: poll the screen, bounded by a deadline.
        deadline = time.monotonic() + timeout
        while True:
            text = self.screen()
            if needle in text:
                return text
            if time.monotonic() > deadline:
                pytest.fail(f"never saw {needle!r}; the screen ended with:\n{text[-3000:]}")
            time.sleep(0.1)

    def keys(self, *keys: str) -> None:
        subprocess.run(["tmux", "send-keys", "-t", self.name, *keys], check=True)

    def alive(self) -> bool:
        return (
            subprocess.run(["tmux", "has-session", "-t", self.name], capture_output=True).returncode
            == 0
        )

    def kill(self) -> None:
        subprocess.run(["tmux", "kill-session", "-t", self.name], capture_output=True)


def start(workdir: Path) -> Tmux:
    path = str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")
    env = f"env -i HOME={shlex.quote(str(workdir))} PATH={shlex.quote(path)} TERM=xterm-256color"
    return Tmux(
        f"{env} {shlex.quote(sys.executable)} -m agent_cli --model demo "
        f"-C {shlex.quote(str(workdir))}"
    )


def test_prompt_6_plan_reviewed_by_the_lead_then_the_write_denied_with_3(workdir: Path):
    (workdir / "NOTES.md").write_text("# Notes\n")
    term = start(workdir)
    try:
        term.wait_for("Ctrl-D exits")
        term.keys(PROMPT_6, "Enter")
        term.wait_for("writer's plan waits for the lead")
        term.wait_for("writer wants to write `NOTES.md`")
        term.wait_for("Choose 1, 2 or 3:")
        term.keys("3")
        term.wait_for("What should writer do instead?")
        term.keys("keep NOTES.md as it is", "Enter")
        screen = term.wait_for("writer denied: NOTES.md — told: keep NOTES.md as it is")
        lines = [line.rstrip() for line in screen.splitlines()]
        # one question, drawn once, with the key that answered it
        assert [ln for ln in lines if ln.startswith("Choose 1, 2 or 3:")] == ["Choose 1, 2 or 3: 3"]
        assert sum(ln.startswith("What should writer do instead?") for ln in lines) == 1
        assert "review_plan" in screen and "plan from writer for task #1 approved" in screen
        term.wait_for("holds #1")
        task = (workdir / ".tasks" / "task_1.json").read_text()
        assert '"in_progress"' in task and '"writer"' in task  # she keeps it (until /quit)
        term.keys("/quit", "Enter")
        deadline = time.monotonic() + 30
        while term.alive() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not term.alive(), "agent-cli did not exit on /quit"
    finally:
        term.kill()
    assert (workdir / "NOTES.md").read_text() == "# Notes\n"
