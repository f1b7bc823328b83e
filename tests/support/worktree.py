"""Helpers for the worktree tests: a real git repository in the test's workdir, git calls,
and scripted teammate steps that edit files in their task's worktree and complete it."""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

from agent_cli.models.base import ModelRequest

from .team import WAIT, Call, Reply, claimed_in

__all__ = ["WAIT", "Call", "Reply", "git", "git_repo", "numbered", "edit_step", "complete_step",
           "last_result"]


def git(cwd: Path, *args: str, check: bool = True) -> str:
    env = {"GIT_AUTHOR_NAME": "user", "GIT_AUTHOR_EMAIL": "user@example.com",
           "GIT_COMMITTER_NAME": "user", "GIT_COMMITTER_EMAIL": "user@example.com",
           "PATH": "/usr/bin:/bin:/usr/local/bin", "HOME": str(cwd)}
    proc = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)}: {proc.stderr}")
    return proc.stdout


def git_repo(workdir: Path, files: dict[str, str]) -> Path:
    """`git init` in workdir with `files` committed on main."""
    git(workdir, "init", "-q", "-b", "main")
    for name, text in files.items():
        path = workdir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(workdir, "add", "-A")
    git(workdir, "commit", "-q", "-m", "start")
    return workdir


def numbered(n: int = 10) -> str:
    return "".join(f"line {i}\n" for i in range(1, n + 1))


def edit_step(path: str, old: str, new: str,
              before: Callable[[ModelRequest], None] | None = None):
    """A scripted entry: edit_file in the teammate's workspace (after `before`)."""

    def entry(request: ModelRequest) -> Reply:
        if before is not None:
            before(request)
        return Reply(tool_calls=[Call("edit_file", {"path": path, "old_string": old,
                                                    "new_string": new})])

    return entry


def complete_step(result: str = "done", wait: threading.Event | None = None,
                  before: Callable[[ModelRequest], None] | None = None):
    """A scripted entry completing the task the host auto-claimed (optionally once `wait`
    is set: the test decides when the landing starts)."""

    def entry(request: ModelRequest) -> Reply:
        if wait is not None and not wait.wait(WAIT):
            raise AssertionError("the test never let the teammate complete")
        if before is not None:
            before(request)
        task_id, token = claimed_in(request)
        return Reply(tool_calls=[Call("complete_task", {
            "task_id": task_id, "claim_token": token, "result": result})])

    return entry


def last_result(request: ModelRequest) -> str:
    """The tool_result text at the end of `request` (what the last call returned)."""
    msg = request.messages[-1]
    return " ".join(b.content for b in msg.content if b.type == "tool_result")


def worker(work: dict[str, Callable[[ModelRequest], Reply]]):
    """An entry for any teammate (use many copies in the "*" queue): on a fresh auto-claim
    it does `work[subject]`, after a file tool it completes the task, else it ends the turn."""
    import re

    def entry(request: ModelRequest) -> Reply:
        last = request.messages[-1]
        result = last_result(request)
        text = last.text()
        if "<auto-claimed-task" in text:  # (after a completion it comes with that result)
            subject = re.search(r"Subject: (.*)", text).group(1).strip()
            return work[subject](request)
        if result.startswith(("Created", "Edited", "Overwrote")):
            task_id, token = claimed_in(request)
            return Reply(tool_calls=[Call("complete_task", {
                "task_id": task_id, "claim_token": token, "result": "done"})])
        return Reply(text="done")

    return entry
