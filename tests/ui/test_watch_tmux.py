"""`agent-cli watch` live in a real terminal (tmux, 80x24): a second process adds and claims
tasks and the screen follows; t and m toggle the team and events panes; a resize redraws at
the new size; q quits and gives the terminal back. Read off `tmux capture-pane`."""

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

from agent_cli.board import TaskBoard
from agent_cli.team.roster import Roster

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
DEADLINE = 15.0  # generous for a loaded machine; bench/watch.py prints the real latency


class Screen:
    def __init__(self, command: str, width: int, height: int) -> None:
        self.name = f"agent-cli-watch-test-{uuid.uuid4().hex[:8]}"
        subprocess.run(["tmux", "new-session", "-d", "-s", self.name, "-x", str(width),
                        "-y", str(height), command], check=True)

    def text(self) -> str:
        out = subprocess.run(["tmux", "capture-pane", "-p", "-t", self.name],
                             capture_output=True, text=True)
        return out.stdout

    def wait(self, ok, what: str) -> str:
        # A terminal has no condition to wait on: poll the screen, bounded by a deadline.
        deadline = time.monotonic() + DEADLINE
        while True:
            text = self.text()
            if ok(text):
                return text
            if time.monotonic() > deadline:
                pytest.fail(f"never saw {what}; the screen was:\n{text}")
            time.sleep(0.05)

    def keys(self, *keys: str) -> None:
        subprocess.run(["tmux", "send-keys", "-t", self.name, *keys], check=True)

    def alive(self) -> bool:
        return subprocess.run(["tmux", "has-session", "-t", self.name],
                              capture_output=True).returncode == 0

    def kill(self) -> None:
        subprocess.run(["tmux", "kill-session", "-t", self.name], capture_output=True)


def cli(workdir: Path, *args: str) -> None:
    subprocess.run([sys.executable, "-m", "agent_cli", "-C", str(workdir), *args],
                   check=True, capture_output=True, timeout=60)


@pytest.fixture
def screen(workdir: Path):
    board = TaskBoard(workdir / ".tasks")
    board.create("first job")
    board.create("second job", blocked_by=[1])
    Roster(workdir / ".team").add("alice", "tester")
    path = str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")
    env = f"env -i HOME={shlex.quote(str(workdir))} PATH={shlex.quote(path)} TERM=xterm-256color"
    s = Screen(f"{env} {shlex.quote(sys.executable)} -m agent_cli -C "
               f"{shlex.quote(str(workdir))} watch", 80, 24)
    yield s
    s.kill()


def test_the_live_view_follows_another_process(workdir: Path, screen: Screen) -> None:
    first = screen.wait(lambda t: "pending (2, 1 blocked)" in t, "the first frame")
    assert "q quit  t team  m events" in first and "alice" in first
    assert max(len(line) for line in first.splitlines()) <= 80
    cli(workdir, "tasks", "add", "fresh from a shell")
    screen.wait(lambda t: "#3 fresh from a shell" in t and "pending (3, 1 blocked)" in t,
                "the task added by another process")
    cli(workdir, "tasks", "claim", "1", "--as", "bob")
    text = screen.wait(lambda t: "in progress (1)" in t and "@bob" in t, "bob's claim")
    assert "bob claimed #1 first job" in text


def test_keys_toggle_panes_and_q_quits(workdir: Path, screen: Screen) -> None:
    screen.wait(lambda t: "team default (1)" in t and "lead inbox" in t, "both panes")
    screen.keys("t")
    screen.wait(lambda t: "team default" not in t and "lead inbox" in t, "the team pane hidden")
    screen.keys("m")
    screen.wait(lambda t: "lead inbox" not in t and "pending (2" in t, "the events pane hidden")
    screen.keys("t")
    screen.wait(lambda t: "team default (1)" in t, "the team pane back")
    subprocess.run(["tmux", "resize-window", "-t", screen.name, "-x", "130", "-y", "40"],
                   check=True)
    screen.wait(lambda t: any(len(line) > 100 for line in t.splitlines()), "a wider frame")
    screen.keys("q")
    deadline = time.monotonic() + DEADLINE
    while screen.alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not screen.alive(), "q did not end watch"


def test_a_headless_team_run_shows_up_live(workdir: Path, tmp_path: Path) -> None:
    import json

    script = {
        "lead": [
            {"text": "Planning.", "tool_calls": [
                {"name": "create_task", "input": {"subject": "from headless"}},
                {"name": "spawn_teammate", "input": {"name": "carol", "role": "tester"}}]},
            {"text": "carol takes it."},
            {"text": "carol could not run her command."},
        ],
        "carol": [
            {"text": "Running.", "tool_calls": [{"name": "shell",
                                                  "input": {"command": "echo hi"}}]},
            {"text": "It was denied."},
        ],
    }
    path = tmp_path / "script.json"
    path.write_text(json.dumps(script))
    env = f"env -i HOME={shlex.quote(str(workdir))} PATH={shlex.quote(os.environ['PATH'])}"
    s = Screen(f"{env} TERM=xterm-256color {shlex.quote(sys.executable)} -m agent_cli -C "
               f"{shlex.quote(str(workdir))} watch", 100, 40)
    try:
        s.wait(lambda t: "pending (0)" in t, "the empty board")
        proc = subprocess.run(
            [sys.executable, "-m", "agent_cli", "--model", f"script:{path}", "-C", str(workdir),
             "-p", "plan it", "--wait", "--timeout", "60"],
            capture_output=True, text=True, timeout=120)
        assert proc.returncode == 1, proc.stderr  # carol's command was denied: unfinished
        assert 'agent-cli: unfinished #1 "from headless" (pending, carol)' in proc.stderr
        text = s.wait(lambda t: "shut down" in t and "released #1" in t
                      and "session ended" in t, "carol's claim, release and shutdown")
        assert "#1 from headless" in text and "pending (1)" in text  # released on shutdown
        assert "carol claimed #1 from headless" in text
        assert "lead created #1 from headless" in text
        lead = next(line for line in text.splitlines() if line.startswith("lead "))
        assert "session ended (script:" in lead and lead.rstrip().endswith("-")  # unpriced
    finally:
        s.kill()
