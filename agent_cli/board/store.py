"""TaskBoard: the shared task board in `.tasks/`, safe across threads and processes.

Every read-modify-write runs in one short critical section (section.py: the locks, the cache
brought up to date, write-ahead writes to the task files and `events.jsonl`). The board emits
its own notifications: after the lock is released, `on_change` is called, then `on_event` with
one TaskEvent per event record (created, updated, claimed, completed, released,
lease_expired), so a caller never builds them. Holder changes live in claims.py. Nothing slow
(model calls, tool runs, approvals) ever happens under the lock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from ..errors import Refused, StorageError
from ..events import TaskEvent
from ..fsutil import read_state, utc_now
from ..names import check_name
from . import dag, routing
from .cache import task_file
from .claims import Claims, existing, idle_text
from .eventlog import event_record, read_events, tail_events
from .inputs import check_id, check_subject, check_text, check_verify
from .journal import overwrite_small, read_journal, read_stamp, write_order
from .leases import Expiry, Leases, OwnerGone
from .models import BoardSnapshot, ClaimResult, CompleteResult, Problem, Task, Verify
from .section import Section


class TaskBoard:
    """The board in `tasks_dir`. One instance per Runtime; its methods are thread-safe."""

    def __init__(
        self,
        tasks_dir: Path,
        on_change: Callable[[], None] | None = None,
        *,
        on_event: Callable[[TaskEvent], None] | None = None,
        lease_s: float | None = None,
        clock: Callable[[], float] | None = None,
        token_factory: Callable[[], str] | None = None,
        owner_gone: OwnerGone | None = None,
    ) -> None:
        self.dir = Path(tasks_dir)
        self.leases = Leases(self.dir, lease_s, clock, token_factory, owner_gone)
        self._section = Section(self.dir, self.leases, on_change, on_event)
        self._claims = Claims(self._section)
        self._snapshot: tuple[int, BoardSnapshot] | None = None
        self._next_id_path = self.dir / ".next_id"

    @property
    def lease_s(self) -> float:
        """How long a claim stays valid unless renewed (the renewer runs at a third of it)."""
        return self.leases.lease_s

    # ----- reads -----
    def stamp(self) -> str:
        """Cheap: changes on every write by any process ("" for a board never written)."""
        return read_stamp(self._section.stamp_path)

    def snapshot(self) -> BoardSnapshot:
        """Valid tasks sorted by id, plus every problem (corrupt files, broken dependencies)."""
        with self._section.locked() as exists:
            cache = self._section.cache
            if self._snapshot is not None and self._snapshot[0] == cache.version and exists:
                return self._snapshot[1]
            snap = self._build_snapshot() if exists else BoardSnapshot()
            self._snapshot = (cache.version, snap)
            return snap

    def _build_snapshot(self) -> BoardSnapshot:
        cache = self._section.cache
        tasks = cache.tasks
        paths = {tid: str(task_file(self.dir, tid)) for tid in tasks}
        problems = cache.problems() + dag.graph_problems(tasks, cache.corrupt_ids(), paths)
        for owner, held in cache.holders().items():
            if len(held) > 1:
                problems.append(
                    Problem(
                        path=paths[held[1].id],
                        task_id=held[1].id,
                        message=f"{owner} holds {dag.ids_text(t.id for t in held)} at once",
                    )
                )
        ordered = [tasks[i] for i in cache.sorted_ids]
        problems.sort(key=lambda p: p.task_id or 0)
        return BoardSnapshot(tasks=ordered, problems=problems, stamp=cache.stamp)

    def get(self, task_id: int) -> Task:
        task_id = check_id(task_id)
        with self._section.locked():
            return existing(self._section.cache, task_id, corrupt_error=True)

    def held_by(self, owner: str) -> Task | None:
        check_name(owner, "owner")
        with self._section.locked():
            held = self._section.cache.held_by(owner)
            return held[0] if held else None

    def idle_reason(self, owner: str, role: str | None = None) -> str:
        check_name(owner, "owner")
        with self._section.locked() as exists:
            if not exists:
                return "no tasks on the board"
            held = self._section.cache.held_by(owner)
            return idle_text(self._section.cache, owner, role, held[0] if held else None)

    def doctor(self) -> list[Problem]:
        """Every problem on the board, after a full rescan of the directory."""
        with self._section.locked() as exists:
            if not exists:
                return []
            self._section.cache.refresh(self._section.stamp_path, force_full=True)
            return self._build_snapshot().problems

    def events(self) -> list[dict[str, Any]]:
        """The parsed event log (a torn last line and malformed lines are skipped), after
        the events of a write that died halfway were appended."""
        with self._section.locked():
            pass  # settles a dead writer's events (read outside: the log can be long)
        return read_events(self._section.events_path)[0]

    def event_problems(self) -> list[Problem]:
        return read_events(self._section.events_path)[1]

    def recent_events(self, count: int) -> list[dict[str, Any]]:
        """The last `count` events, oldest first: cheap (the log's tail), no lock taken."""
        return tail_events(self._section.events_path, count)

    def write_order(self) -> dict[int, int]:
        """Task id -> the rank of its last write among the board's recent writes (higher:
        later), for showing the latest changes first; {} when none is remembered."""
        journal = read_journal(self._section.stamp_path)
        return write_order(journal) if journal else {}

    def file_of(self, task_id: int) -> Path | None:
        """The file task `task_id` is stored in (a backend without files: None)."""
        return task_file(self.dir, check_id(task_id))

    # ----- writes -----
    def create(
        self,
        subject: str,
        description: str = "",
        blocked_by: Iterable[int] = (),
        verify: Verify | dict | None = None,
        actor: str = "lead",
        *,
        assignee: str | None = None,
        role: str | None = None,
        require_plan: bool = False,
    ) -> Task:
        """Add a pending task; its id is allocated under the lock and never reused.
        `assignee` / `role` say who may claim it, `require_plan` that its holder must plan."""
        subject = check_subject(subject)
        check_text(description, "task description")
        check_name(actor, "actor")
        verify = check_verify(verify)
        routed = routing.fields(assignee, role, require_plan)
        deps = list(blocked_by)
        with self._section.locked(create=not deps) as exists:
            if not exists:  # no board yet: every dependency is unknown
                dag.check_new_dependencies(1, deps, {}, set())
            new_id = self._allocate_id()
            wanted = dag.check_new_dependencies(
                new_id, deps, self._section.cache.tasks, self._section.cache.corrupt_ids()
            )
            now = utc_now()
            task = Task(
                id=new_id,
                subject=subject,
                description=description,
                blocked_by=wanted,
                created_at=now,
                updated_at=now,
                verify=verify,
                **routed,
            )
            overwrite_small(self._next_id_path, f"{new_id + 1}\n".encode())
            record = event_record(actor, "created", new_id, subject=subject, blockedBy=wanted)
            record["details"].update({k: v for k, v in routed.items() if v})
            self._section.write([task], [record])
        return task

    def _allocate_id(self) -> int:
        try:
            high = int((read_state(self._next_id_path, 64) or b"").strip())
        except (OSError, StorageError, ValueError):  # a link or FIFO there counts as missing
            high = 1
        return max(high, self._section.cache.max_file_id() + 1, 1)

    def update(
        self,
        task_id: int,
        *,
        add_blocked_by: Iterable[int] = (),
        actor: str = "lead",
        assignee: str | None = None,
        role: str | None = None,
        require_plan: bool | None = None,
    ) -> Task:
        """Add dependencies to, or re-route, a pending, unclaimed task (missing ids and cycles
        refused). For assignee / role: None keeps it, "" clears it, a value sets it."""
        task_id = check_id(task_id)
        check_name(actor, "actor")
        deps = list(add_blocked_by)
        routed = routing.changes(assignee, role, require_plan)
        with self._section.locked():
            task = existing(self._section.cache, task_id)
            if task.status != "pending":
                raise Refused(routing.not_pending(task, bool(routed) and not deps))
            added = dag.check_new_dependencies(
                task_id, deps, self._section.cache.tasks, self._section.cache.corrupt_ids()
            )
            merged = sorted(set(task.blocked_by) | set(added))
            changed = {k: v for k, v in routed.items() if getattr(task, k) != v}
            if merged == task.blocked_by and not changed:
                return task
            task = task.model_copy(
                update={"blocked_by": merged, "updated_at": utc_now(), **changed}
            )
            self._section.write(
                [task], [event_record(actor, "updated", task_id, blockedBy=merged, **changed)]
            )
        return task

    def claim(
        self, task_id: int, owner: str, role: str | None = None, lease_s: float | None = None
    ) -> Task:
        """Claim one task for `owner` (of `role`); Refused with the reason when it is not
        claimable or not theirs to take (assigned to someone else, another role)."""
        return self._claims.claim(task_id, owner, role, lease_s)

    def claim_next(
        self, owner: str, role: str | None = None, lease_s: float | None = None, *,
        detail: str = "",
    ) -> ClaimResult:
        """Claim the lowest claimable id `owner` (of `role`) may take, or say why there is
        none. `detail` is what its notification says ("auto-claimed")."""
        return self._claims.claim_next(owner, role, lease_s, detail)

    def complete(
        self, task_id: int, owner: str, claim_token: str, result: str = "", actor: str | None = None
    ) -> CompleteResult:
        """Complete an in_progress task: same owner and same claim token, else Refused."""
        return self._claims.complete(task_id, owner, claim_token, result, actor)

    def release(self, task_id: int, owner: str, reason: str = "") -> Task:
        """Put `owner`'s in_progress task back to pending (teammate stopped or died)."""
        return self._claims.release(task_id, owner, reason)

    def verify_failed(self, task: Task, agent: str, detail: str) -> None:
        """Announce that `agent`'s completion of `task` was refused (its verify or a
        TaskCompleted hook): a notification only, the task is unchanged and nothing is logged."""
        self._section.notice(
            TaskEvent(agent=agent, action="verify_failed", task_id=task.id,
                      subject=task.subject, detail=detail)
        )

    def notices_held(self) -> AbstractContextManager[None]:
        """Hold this thread's notifications (on_event) until the block ends: a landing
        announces its completion once its worktree is gone."""
        return self._section.notices_held()

    # ----- leases (rules in leases.py) -----
    def take_expired(self) -> list[Expiry]:
        """The leases this board instance took back (now included) since the last call."""
        with self._section.locked():
            return self._section.take_expired()

    def stale_claim(self, task_id: int, owner: str, claim_token: object) -> Refused | None:
        """LeaseExpired when `claim_token` was `owner`'s claim on the task and its lease ran
        out (what complete would raise), else None."""
        with self._section.locked():
            task = existing(self._section.cache, check_id(task_id))
            return self.leases.refusal(task, owner, claim_token)

    def renew(self, owners: Iterable[str], lease_s: float | None = None) -> list[Task]:
        """Extend the live leases of `owners` from now: one write, no event, no wake-up.
        An expired lease is never renewed: it was taken back first."""
        names = [check_name(o, "owner") for o in owners]
        with self._section.locked() as exists:
            held = [t for n in names for t in self._section.cache.held_by(n)] if exists else []
            if not held:
                return []
            _, until = self.leases.claim_fields(lease_s)
            renewed = [t.model_copy(update={"lease_expires_at": until}) for t in held]
            self._section.write(renewed, [])
        return renewed
