"""SIGKILL during a landing leaves the landed or the unlanded state, never a mix, and the
next run finishes it: the landing journal (in the git directory) is rolled forward at start-up."""

from __future__ import annotations

import os
import random
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.worktree import git, git_repo

from agent_cli.runtime import Runtime, RuntimeConfig

FILES = [f"f{i}.txt" for i in range(1, 6)]
CHILD = Path(__file__).parents[1] / "support" / "worktree_land_child.py"


def _setup(workdir: Path):
    git_repo(workdir, {name: f"old {name}\n" for name in FILES})
    (workdir / "mine.txt").write_text("the user's own uncommitted file\n")
    rt = Runtime.open(workdir, RuntimeConfig())
    task = rt.board.create("change five files")
    claimed = rt.board.claim(task.id, "alice")
    assert "worktree" in rt.worktrees.prepare(claimed, "alice")
    wt = rt.worktrees.path(task.id)
    for name in FILES:
        (wt / name).write_text(f"new {name}\n")
    return claimed


def _child(workdir: Path, task, kill_at: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    return subprocess.Popen(
        [sys.executable, str(CHILD), str(workdir), str(task.id), "alice", task.claim_token,
         kill_at], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)


def _read_until(proc: subprocess.Popen, marker: str, timeout: float = 30.0) -> list[str]:
    """The child's lines up to `marker` (read unbuffered, so select sees every line)."""
    buf = b""
    fd = proc.stdout.fileno()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        lines = buf.decode().splitlines()
        if marker in lines:
            return lines
        ready, _, _ = select.select([fd], [], [], deadline - time.monotonic())
        chunk = os.read(fd, 4096) if ready else b""
        if not chunk:
            break
        buf += chunk
    proc.kill()
    raise AssertionError(f"child never printed {marker}: {buf!r} {proc.stderr.read()}")


def _contents(workdir: Path) -> set[str]:
    return {(workdir / n).read_text().split()[0] for n in FILES}


def _state(workdir: Path, task_id: int) -> str:
    """'landed' or 'unlanded' after a fresh start-up; anything else is a mix."""
    rt = Runtime.open(workdir, RuntimeConfig())
    assert rt.worktrees.enabled  # start-up: a landing left halfway is finished here
    contents = _contents(workdir)
    task = rt.board.get(task_id)
    assert "<<<<<<<" not in "".join((workdir / n).read_text() for n in FILES)
    assert (workdir / "mine.txt").read_text() == "the user's own uncommitted file\n"
    if contents == {"new"}:
        assert task.status == "completed" and task.result == "landed by the child"
        assert not rt.worktrees.path(task_id).exists()
        assert rt.worktrees.state.get(task_id)["status"] == "landed"
        assert not rt.worktrees.landing.journal.exists()
        return "landed"
    assert contents == {"old"}, f"a mix in the main tree: {contents}"
    assert (task.status, task.owner) == ("in_progress", "alice")
    wt = rt.worktrees.path(task_id)
    assert {(wt / n).read_text() for n in FILES} == {f"new {n}\n" for n in FILES}
    return "unlanded"


@pytest.mark.parametrize("step, after", [
    ("commit", "unlanded"), ("merge", "unlanded"), ("apply", "landed"),
    ("file:f3.txt", "landed"), ("complete", "landed"),
])
def test_sigkill_at_a_step_then_restart(workdir, step, after):
    task = _setup(workdir)
    proc = _child(workdir, task, step)
    _read_until(proc, f"AT {step}")
    if step == "file:f3.txt":  # the moment a mix is on disk: three files moved, two not
        assert [(workdir / n).read_text().split()[0] for n in FILES].count("new") == 3
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    assert _state(workdir, task.id) == after
    if after == "unlanded":  # the next landing goes through
        again = _child(workdir, task, "-")
        _read_until(again, "LANDED")
        again.wait(10)
        assert _state(workdir, task.id) == "landed"
    lead = [m for m in Runtime.open(workdir).mail.fetch("lead").messages if m.type == "result"]
    if step in ("apply", "file:f3.txt", "complete"):  # the restart told the lead
        assert len(lead) == 1 and "files changed: f1.txt, f2.txt" in lead[0].content
    log = git(workdir, "log", "--format=%s", f"agent-cli/task-{task.id}")
    assert log.startswith(f"task #{task.id}: change five files") or "merge the main tree" in log


def test_sigkill_at_random_moments_never_leaves_a_mix(workdir):
    task = _setup(workdir)
    rng = random.Random(14)
    outcomes = []
    for _ in range(6):
        proc = _child(workdir, task, "-")
        _read_until(proc, "STEP commit")  # the child is landing: kill it somewhere in there
        time.sleep(rng.uniform(0, 0.15))  # a random kill point, not a wait for a thread
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        outcomes.append(_state(workdir, task.id))
        if outcomes[-1] == "landed":
            break
    if outcomes[-1] != "landed":
        proc = _child(workdir, task, "-")
        _read_until(proc, "LANDED")
        proc.wait(10)
        assert _state(workdir, task.id) == "landed"
