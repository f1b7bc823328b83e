"""Who holds a task: claim, claim the next, complete and release, under the board's lock.

Each runs in one critical section (section.py): check the routing and dependency rules and
the holder's claim token, write the task with its event record. A claim draws a fresh token
and a lease (leases.py); a completion names the tasks it unblocked.
"""

from __future__ import annotations

from ..errors import CorruptFile, NotFound, Refused
from ..fsutil import utc_now
from ..names import check_name
from . import dag, routing
from .cache import TaskCache
from .eventlog import event_record
from .inputs import check_id, check_text
from .models import ClaimResult, CompleteResult, Task
from .section import Section


def existing(cache: TaskCache, task_id: int, corrupt_error: bool = False) -> Task:
    """The task `task_id`; NotFound, or Refused (CorruptFile with `corrupt_error`) when its
    file is corrupt."""
    task = cache.tasks.get(task_id)
    if task is not None:
        return task
    entry = cache.entries.get(f"task_{task_id}.json")
    if entry is not None and entry.problem is not None:
        if corrupt_error:
            raise CorruptFile(entry.problem.path, entry.problem.message)
        raise Refused(f"task {task_id} is corrupt: {entry.problem.message}")
    raise NotFound(f"no task {task_id}")


def idle_text(cache: TaskCache, owner: str, role: str | None, held: Task | None) -> str:
    """Why `owner` (of `role`) has nothing to claim."""
    return dag.idle_text(
        owner,
        cache.tasks,
        cache.corrupt_ids(),
        held,
        lambda t: routing.refusal(t, owner, role),
        routing.short_reason,
    )


class Claims:
    """The holder-changing writes of one board (TaskBoard delegates to it)."""

    def __init__(self, section: Section) -> None:
        self._section = section

    def claim(self, task_id: int, owner: str, role: str | None, lease_s: float | None) -> Task:
        task_id = check_id(task_id)
        check_name(owner, "owner")
        with self._section.locked():
            cache = self._section.cache
            task = existing(cache, task_id)
            held = cache.held_by(owner)
            reason = routing.claim_refusal(task, owner, role) or dag.claim_refusal(
                task, owner, cache.tasks, held[0] if held else None
            )
            if reason:
                raise Refused(reason)
            return self._claim_locked(task, owner, "claim", lease_s)

    def claim_next(
        self, owner: str, role: str | None, lease_s: float | None, detail: str = ""
    ) -> ClaimResult:
        check_name(owner, "owner")
        with self._section.locked() as exists:
            if not exists:
                return ClaimResult(None, "no tasks on the board")
            cache = self._section.cache
            held = cache.held_by(owner)
            if held:
                return ClaimResult(None, f"{owner} still holds #{held[0].id}")
            task = routing.first_for(cache.pending, cache.tasks, owner, role)
            if task is None:
                return ClaimResult(None, idle_text(cache, owner, role, None))
            claimed = self._claim_locked(task, owner, "claim_next", lease_s, detail)
        return ClaimResult(claimed, f"claimed #{claimed.id}")

    def _claim_locked(
        self, task: Task, owner: str, via: str, lease_s: float | None, detail: str = ""
    ) -> Task:
        leases = self._section.leases
        now, until = leases.claim_fields(lease_s)
        claimed = task.model_copy(
            update={
                "status": "in_progress",
                "owner": owner,
                "claim_token": leases.draw_token(self._section.cache.leases, task.id),
                "claimed_at": now,
                "lease_expires_at": until,
                "updated_at": now,
            }
        )
        record = event_record(owner, "claimed", task.id, owner=owner, via=via, subject=task.subject)
        self._section.write([claimed], [record], detail)
        return claimed

    def complete(
        self, task_id: int, owner: str, claim_token: str, result: str, actor: str | None
    ) -> CompleteResult:
        task_id = check_id(task_id)
        check_name(owner, "owner")
        actor = check_name(actor, "actor") if actor is not None else owner
        check_text(result, "task result")
        with self._section.locked():
            cache = self._section.cache
            stale = self._section.leases.refusal(existing(cache, task_id), owner, claim_token)
            if stale is not None:
                raise stale
            task = self._check_holder(task_id, owner)
            if not isinstance(claim_token, str) or claim_token != task.claim_token:
                raise Refused(f"wrong claim token for task {task_id}")
            self._section.leases.note("d", claim_token, task_id)
            done = task.model_copy(
                update={
                    "status": "completed",
                    "claim_token": None,
                    "lease_expires_at": None,
                    "result": result,
                    "updated_at": utc_now(),
                }
            )
            unblocked = dag.newly_unblocked(task_id, {**cache.tasks, task_id: done})
            record = event_record(
                actor, "completed", task_id, owner=owner, result=result[:200], unblocked=unblocked
            )
            self._section.write([done], [record])
        return CompleteResult(done, unblocked)

    def release(self, task_id: int, owner: str, reason: str) -> Task:
        task_id = check_id(task_id)
        check_name(owner, "owner")
        with self._section.locked():
            task = self._check_holder(task_id, owner)
            self._section.leases.note("r", task.claim_token, task_id)
            back = task.model_copy(
                update={
                    "status": "pending",
                    "owner": None,
                    "claim_token": None,
                    "claimed_at": None,
                    "lease_expires_at": None,
                    "updated_at": utc_now(),
                }
            )
            record = event_record(owner, "released", task_id, owner=owner, reason=reason)
            self._section.write([back], [record])
        return back

    def _check_holder(self, task_id: int, owner: str) -> Task:
        task = existing(self._section.cache, task_id)
        if task.status == "completed":
            raise Refused(f"task {task_id} is completed")
        if task.status == "pending":
            raise Refused(f"task {task_id} is not claimed")
        if task.owner != owner:
            raise Refused(f"task {task_id} is owned by {task.owner}")
        return task
