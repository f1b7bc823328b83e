"""complete_task for the caller: landed from its worktree when the task has one, else the
plain verified completion (team/verify.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import Refused
from ..tools.base import ToolContext
from .verify import VerifyFailed, ask_verify, complete_verified

if TYPE_CHECKING:
    from ..runtime import Runtime


def complete_task(
    runtime: Runtime, ctx: ToolContext, task_id: int, claim_token: str, result: str, gate=None
) -> str:
    """The tool result text; ToolError / Refused keep the task in progress with its owner."""
    wt = runtime.worktrees
    if not wt.enabled or not wt.is_ready(task_id):
        return complete_verified(runtime, ctx, task_id, claim_token, result, gate)
    owner = ctx.agent
    task = runtime.board.get(task_id)
    if task.status != "in_progress" or task.owner != owner:
        holder = f"owned by {task.owner}" if task.owner else task.status
        raise Refused(f"task {task_id} is not yours to complete ({holder})")
    if task.claim_token != claim_token:
        raise Refused(f"wrong claim_token for task {task_id}")
    if task.verify is not None:  # ask before queueing: no approval waits under the lock
        refused = ask_verify(runtime, task, ctx, gate)
        if refused is not None:
            runtime.board.verify_failed(task, owner, refused.detail)
            raise VerifyFailed(f"task #{task_id} not completed: {refused.detail}. It stays "
                               "in_progress with you.", refused.detail)
    if wt.remote is not None:  # a teammate on another host: the lead's host lands it
        from .remote_branches import hand_off

        pushed = hand_off(wt, task, owner, claim_token, result, wt.remote, ctx.cancel)
        return (f"task #{task_id} completed; its change is on {pushed.branch} "
                f"({pushed.commit[:12]}), pushed to {pushed.remote} for the lead's host to land")
    with runtime.board.notices_held():  # "completed" once the worktree is gone
        landed = wt.landing.land(task, owner, claim_token, result, ctx.cancel)
    text = f"task #{task_id} completed"
    if task.verify is not None:
        text += " (verify passed on the merged state)"
    if landed.files:
        text += "; landed in the main tree: " + ", ".join(landed.files)
    else:
        text += "; it changed no files"
    if landed.skipped:
        text += "; left alone (the user changed them meanwhile): " + ", ".join(landed.skipped)
    if landed.note:
        text += f"; note: {landed.note}"
    if landed.unblocked:
        text += "; now claimable: " + ", ".join(f"#{i}" for i in landed.unblocked)
    return text
