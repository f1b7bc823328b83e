"""`agent-cli tasks complete` on a task with a verify: nothing a model wrote runs unasked.

A verify command written at the command line (`set_by` "cli" / "user") runs, as its writer
typed it. Any other (written by a member's model through create_task, or by nobody known
in an older task file) runs only after the exact command is shown and the person at the
terminal answers `y` to `[y/N]`; with no terminal, only with `--run-verify`. Otherwise it is
refused (exit 4) in one line naming `--run-verify`. Every run and refusal is an audit line
with who wrote the command.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import Refused, ToolError

if TYPE_CHECKING:
    from ..board.models import Task

HUMAN_WRITERS = frozenset({"cli", "user"})


def _terminal() -> bool:
    try:
        return sys.stdin.isatty() and sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def _ask(task: Task) -> bool:
    assert task.verify is not None
    who = task.verify.set_by or "an unknown writer"
    print(f"task #{task.id} has a verify command written by {who}:")
    print(f"    {task.verify.command}")
    try:
        answer = input("Run it in this workdir? [y/N] ")
    except (EOFError, KeyboardInterrupt):
        print()
        return False
    return answer.strip().lower() in ("y", "yes")


def approve(task: Task, run_verify: bool) -> str:
    """How the verify was approved ("set by cli", "--run-verify", "terminal"), or Refused."""
    assert task.verify is not None
    writer = task.verify.set_by
    if writer in HUMAN_WRITERS:
        return f"set by {writer}"
    if run_verify:
        return "--run-verify"
    if not _terminal():
        who = writer or "an unknown writer"
        raise Refused(
            f"task {task.id} not completed: its verify command (written by {who}) needs your "
            f"approval and there is no terminal to ask; rerun with --run-verify to accept "
            f"`{task.verify.command}`"
        )
    if not _ask(task):
        raise Refused(f"task {task.id} not completed: you did not approve its verify command")
    return "terminal"


def approve_cli_verify(task: Task, workdir: Path, run_verify: bool) -> None:
    """Approve (see module docstring) and audit the decision; Refused when not approved.
    Landing a worktree from the command line calls this before it runs the verify there."""
    from ..permissions.audit import AuditLog
    from ..team.verify import record_verify

    audit = AuditLog(workdir / ".team" / "audit.jsonl")
    try:
        how = approve(task, run_verify)
    except Refused as exc:
        record_verify(audit, task, "cli", False, "refused", str(exc))
        raise
    record_verify(audit, task, "cli", True, how)


def run_cli_verify(task: Task, workdir: Path, run_verify: bool) -> None:
    """Approve and audit, then run and compare; Refused if anything fails."""
    from ..team.verify import check_verify

    approve_cli_verify(task, workdir, run_verify)
    assert task.verify is not None
    print(f"running verify: {task.verify.command}", flush=True)
    try:
        outcome = check_verify(task.verify, workdir)
    except ToolError as exc:  # e.g. its expected_stdout_file is unreadable
        raise Refused(f"task {task.id} not completed: {exc}") from None
    if not outcome.passed:
        raise Refused(f"task {task.id} not completed: {outcome.detail}")
    print("verify passed")
