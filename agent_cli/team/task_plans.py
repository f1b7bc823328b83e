"""Plans a task requires (`require_plan` on the task, not on the teammate).

Whoever holds such a task must have a plan approved for it — for this claim of it — before
any effectful tool runs, whatever the teammate was spawned with. submit_plan records the task
its sender holds in the request (`task_id`, `task_claimed_at`), so the host, not the model,
says which task a plan is for; an approval opens the gate for that task only. `gate` is the
whole plan gate: the teammate-wide one (plans.plan_block) for a teammate spawned with
require_plan, then the task's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import plans
from .plans import ALLOWED

if TYPE_CHECKING:
    from ..board.models import Task
    from ..runtime import Runtime
    from .protocol import ProtocolRequest, ProtocolStore

TASK_REQUIRED = (
    "plan approval required for task #{id}: call submit_plan first (the plan is for this "
    f"task); {ALLOWED}"
)
TASK_PENDING = f"plan approval for task #{{id}} pending: {ALLOWED}"
TASK_REJECTED = (
    "plan for task #{id} rejected by the lead: revise it and submit_plan again; " + ALLOWED
)
TASK_EXPIRED = (
    "your plan for task #{id} expired before the lead reviewed it: call submit_plan again; "
    + ALLOWED
)


def plan_for(protocols: ProtocolStore, name: str, task: Task) -> ProtocolRequest | None:
    """`name`'s newest plan request for this claim of `task` (CorruptFile if unreadable)."""
    found = [
        r
        for r in protocols.load()
        if r.kind == "plan_approval"
        and r.sender == name
        and r.task_id == task.id
        and r.task_claimed_at == task.claimed_at
    ]
    return found[-1] if found else None


def gate(rt: Runtime, name: str, require_plan: bool) -> str | None:
    """The whole plan gate of teammate `name` (spawned with `require_plan` or not): why its
    effectful tools are refused, or None.

    A teammate spawned without require_plan answers to its task's requirement only: its last
    plan, if made for a task, decides only while it holds that claim (then the refusal names
    the task). Otherwise the teammate-wide gate (plans.plan_block) first, then the task's.
    Raises (StorageError, CorruptFile) when the board or requests.json cannot be read: the
    gate turns that into a refusal (fail closed)."""
    held = rt.board.held_by(name)
    if not require_plan:
        latest = rt.protocols.latest_plan(name)
        if stale(latest, held):
            return task_plan_block(rt, name, held)
        if latest is not None and latest.task_id is not None and held and held.require_plan:
            return task_plan_block(rt, name, held)
    return plans.plan_block(rt.protocols, name, require_plan) or task_plan_block(rt, name, held)


def task_plan_block(rt: Runtime, name: str, held: Task | None) -> str | None:
    """Why `name`'s effectful tools are refused because of the task it holds, or None."""
    if held is None or not held.require_plan:
        return None
    plan = plan_for(rt.protocols, name, held)
    if plan is None:
        return TASK_REQUIRED.format(id=held.id)
    if plan.status == "pending":
        expired = rt.protocols.has_expired(plan)
        return (TASK_EXPIRED if expired else TASK_PENDING).format(id=held.id)
    if plan.status == "rejected":
        return TASK_REJECTED.format(id=held.id)
    return None


def stale(req: ProtocolRequest | None, held: Task | None) -> bool:
    """A plan made for a task (claim) its sender no longer holds: for a teammate that was not
    spawned with require_plan it decides nothing any more (pending or rejected, it must not
    keep that teammate from other work)."""
    if req is None or req.task_id is None:
        return False
    return held is None or (held.id, held.claimed_at) != (req.task_id, req.task_claimed_at)


def held_task(rt: Runtime, name: str) -> tuple[int, str | None] | None:
    """(id, claimed_at) of the task `name` holds, for the plan request it submits."""
    held = rt.board.held_by(name)
    return (held.id, held.claimed_at) if held is not None else None
