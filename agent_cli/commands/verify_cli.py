"""`agent-cli tasks complete` on a task with a verify: nothing a model wrote runs unasked.

A verify command the host can prove this user typed (`tasks add --verify-command` recorded
it in the host-private record, board/verify_authors.py, and git does not track its task
file) runs as typed. Any other — written by a member's model through create_task, by nobody
known, or carried by a task file git tracks whatever its `set_by` says — runs only after the
exact command is shown and the person at the terminal answers `y` to `[y/N]`; with no
terminal, only with `--run-verify`. Otherwise it is refused (exit 4) in one line giving the
reason and naming `--run-verify`. Every run and refusal is an audit line with who wrote it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import Refused, ToolError

if TYPE_CHECKING:
    from ..board.models import Task



def _terminal() -> bool:
    try:
        return sys.stdin.isatty() and sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def _ask(task: Task, why: str) -> bool:
    assert task.verify is not None
    print(f"task #{task.id} has a verify command you did not provably type ({why}):")
    print(f"    {task.verify.command}")
    try:
        answer = input("Run it in this workdir? [y/N] ")
    except (EOFError, KeyboardInterrupt):
        print()
        return False
    return answer.strip().lower() in ("y", "yes")


def approve(task: Task, run_verify: bool, workdir: Path, task_file: Path | None) -> str:
    """How the verify was approved ("set by cli", "--run-verify", "terminal"), or Refused.
    `task_file`: where the board keeps the task (board.file_of; None: not in a file)."""
    from ..board.verify_authors import VerifyAuthors

    assert task.verify is not None
    authors = VerifyAuthors(workdir)
    why = authors.unproved(task, task_file)
    if why is None:
        return f"set by {authors.writer(task)}"
    if run_verify:
        return "--run-verify"
    if not _terminal():
        raise Refused(
            f"task {task.id} not completed: its verify command needs your approval ({why}) "
            f"and there is no terminal to ask; rerun with --run-verify to accept "
            f"`{task.verify.command}`"
        )
    if not _ask(task, why):
        raise Refused(f"task {task.id} not completed: you did not approve its verify command")
    return "terminal"


def approve_cli_verify(task: Task, workdir: Path, run_verify: bool,
                       task_file: Path | None) -> None:
    """Approve (see module docstring) and audit the decision; Refused when not approved.
    Landing a worktree from the command line calls this before it runs the verify there."""
    from ..permissions.audit import AuditLog
    from ..state_migration import check
    from ..team.verify import record_verify

    for line in check(workdir):  # old records moved once; carried ones reported
        print(f"agent-cli: warning: {line}", file=sys.stderr)
    audit = AuditLog(workdir / ".team" / "audit.jsonl")
    try:
        how = approve(task, run_verify, workdir, task_file)
    except Refused as exc:
        record_verify(audit, task, "cli", False, "refused", str(exc))
        raise
    record_verify(audit, task, "cli", True, how)


def run_cli_verify(task: Task, workdir: Path, run_verify: bool,
                   task_file: Path | None) -> None:
    """Approve and audit, then run and compare; Refused if anything fails."""
    from ..team.verify import check_verify

    approve_cli_verify(task, workdir, run_verify, task_file)
    assert task.verify is not None
    print(f"running verify: {task.verify.command}", flush=True)
    try:
        outcome = check_verify(task.verify, workdir)
    except ToolError as exc:  # e.g. its expected_stdout_file is unreadable
        raise Refused(f"task {task.id} not completed: {exc}") from None
    if not outcome.passed:
        raise Refused(f"task {task.id} not completed: {outcome.detail}")
    print("verify passed")
