"""TaskBoard: the shared task board in `.tasks/`, safe across threads and processes.

Every read-modify-write runs in one short critical section (lock.BoardLock: an in-process
RLock plus a cross-process file lock on `.tasks/.lock`). Inside: bring the parsed cache
up to date, check the rules, bump the change stamp (write-ahead, carrying the write's event
records), write the task file atomically, append to `events.jsonl`, drop the records from the
stamp, release. A write that died halfway has its landed events appended by the next one to
take the lock. `on_change` is called after the lock is
released. Nothing slow (model calls, tool runs, approvals) ever happens under the lock.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import CorruptFile, NotFound, Refused, StorageError
from ..fsutil import atomic_write_json, read_state, utc_now
from ..names import check_name
from . import dag, routing
from .cache import TaskCache, task_file
from .eventlog import (
    append_event,
    event_record,
    landed_events,
    missing_from_log,
    pending_line,
    read_events,
    with_ids,
)
from .inputs import check_id, check_subject, check_text, check_verify
from .journal import new_journal, overwrite_small, read_stamp, write_journal
from .leases import Expiry, Leases, OwnerGone, iso_ms, taken_back
from .lock import BoardLock
from .models import BoardSnapshot, ClaimResult, CompleteResult, Problem, Task, Verify

log = logging.getLogger(__name__)


class TaskBoard:
    """The board in `tasks_dir`. One instance per Runtime; its methods are thread-safe."""

    def __init__(
        self,
        tasks_dir: Path,
        on_change: Callable[[], None] | None = None,
        *,
        lease_s: float | None = None,
        clock: Callable[[], float] | None = None,
        token_factory: Callable[[], str] | None = None,
        owner_gone: OwnerGone | None = None,
    ) -> None:
        self.dir = Path(tasks_dir)
        self._on_change = on_change
        self._lock = BoardLock(self.dir / ".lock")
        self._cache = TaskCache(self.dir)
        self._snapshot: tuple[int, BoardSnapshot] | None = None
        self._stamp_path = self.dir / ".stamp"
        self._events_path = self.dir / "events.jsonl"
        self._next_id_path = self.dir / ".next_id"
        self.leases = Leases(self.dir, lease_s, clock, token_factory, owner_gone)
        self._expired: list[Expiry] = []  # taken back by this instance, see take_expired()

    # ----- the critical section -----
    @contextmanager
    def _locked(self, *, create: bool = False) -> Iterator[bool]:
        """Hold both locks with the cache up to date; yields False when there is no board yet.
        Leases that ran out are taken back first (one write), whoever asks."""
        swept = False
        self._lock.enter()
        try:
            if not self.dir.is_dir():
                if not create:
                    self._cache = TaskCache(self.dir)
                    yield False
                    return
                try:
                    self.dir.mkdir(parents=True, exist_ok=True)
                except OSError as exc:
                    raise StorageError(f"cannot create {self.dir}: {exc.strerror}") from exc
            handed_over = self._lock.lock_file()
            if self._lock.depth == 1 and not (handed_over and self._cache.stamp):
                # a lock handed over by a thread of this process: no one else wrote since
                self._cache.refresh(self._stamp_path)
                journal = self._cache.journal
                if journal is not None and journal.pending and self._lock.file_held:
                    self._settle_pending()
            if self._lock.depth == 1 and self._lock.file_held:
                swept = self._expire_due()
            yield True
        finally:
            self._lock.leave()
        if swept:
            self._changed()

    def _write(self, tasks: list[Task], events: list[dict[str, Any]]) -> None:
        """Write `tasks` and their events (caller holds the lock)."""
        journal = (self._cache.journal or new_journal()).advance([t.id for t in tasks])
        records = with_ids(journal.stamp, events)
        try:
            # before any task file (write-ahead), with the events in case we die halfway
            write_journal(self._stamp_path, journal.with_pending(pending_line(records, tasks)))
            for task in tasks:
                before = time.time_ns()
                atomic_write_json(task_file(self.dir, task.id), task.to_json())
                self._cache.put(task, before)
            for record in records:
                append_event(self._events_path, record)
            write_journal(self._stamp_path, journal)  # done: nothing pending
        except BaseException:
            self._cache.invalidate()
            raise
        self._cache.seen(journal)

    def _settle_pending(self) -> None:
        """A write died between its stamp and its last event append (the stamp still carries
        its records): append those whose task write landed and that the log lacks, then drop
        them from the stamp. Never fails a read: a disk error leaves them for the next try."""
        journal = self._cache.journal
        assert journal is not None
        try:
            try:
                landed = landed_events(journal.pending, self._cache.tasks.get)
            except ValueError as exc:  # nothing usable: drop it rather than retry forever
                log.warning("%s: unreadable pending events dropped: %s", self._stamp_path, exc)
                landed = []
            for record in missing_from_log(self._events_path, landed):
                append_event(self._events_path, record)
            settled = journal.with_pending("")
            write_journal(self._stamp_path, settled)
        except (StorageError, OSError) as exc:
            log.warning("cannot append the events of an interrupted write: %s", exc)
            return
        self._cache.seen(settled)

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change()

    # ----- reads -----
    def stamp(self) -> str:
        """Cheap: changes on every write by any process ("" for a board never written)."""
        return read_stamp(self._stamp_path)

    def snapshot(self) -> BoardSnapshot:
        """Valid tasks sorted by id, plus every problem (corrupt files, broken dependencies)."""
        with self._locked() as exists:
            cache = self._cache
            if self._snapshot is not None and self._snapshot[0] == cache.version and exists:
                return self._snapshot[1]
            snap = self._build_snapshot() if exists else BoardSnapshot()
            self._snapshot = (cache.version, snap)
            return snap

    def _build_snapshot(self) -> BoardSnapshot:
        cache = self._cache
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
        with self._locked():
            return self._existing(task_id, corrupt_error=True)

    def held_by(self, owner: str) -> Task | None:
        check_name(owner, "owner")
        with self._locked():
            held = self._cache.held_by(owner)
            return held[0] if held else None

    def idle_reason(self, owner: str, role: str | None = None) -> str:
        check_name(owner, "owner")
        with self._locked() as exists:
            if not exists:
                return "no tasks on the board"
            held = self._cache.held_by(owner)
            return self._idle_text(owner, role, held[0] if held else None)

    def _idle_text(self, owner: str, role: str | None, held: Task | None) -> str:
        return dag.idle_text(
            owner,
            self._cache.tasks,
            self._cache.corrupt_ids(),
            held,
            lambda t: routing.refusal(t, owner, role),
            routing.short_reason,
        )

    def doctor(self) -> list[Problem]:
        """Every problem on the board, after a full rescan of the directory."""
        with self._locked() as exists:
            if not exists:
                return []
            self._cache.refresh(self._stamp_path, force_full=True)
            return self._build_snapshot().problems

    def events(self) -> list[dict[str, Any]]:
        """The parsed event log (a torn last line and malformed lines are skipped), after
        the events of a write that died halfway were appended."""
        with self._locked():
            pass  # settles a dead writer's events (read outside: the log can be long)
        return read_events(self._events_path)[0]

    def event_problems(self) -> list[Problem]:
        return read_events(self._events_path)[1]

    def _existing(self, task_id: int, corrupt_error: bool = False) -> Task:
        task = self._cache.tasks.get(task_id)
        if task is not None:
            return task
        entry = self._cache.entries.get(f"task_{task_id}.json")
        if entry is not None and entry.problem is not None:
            if corrupt_error:
                raise CorruptFile(entry.problem.path, entry.problem.message)
            raise Refused(f"task {task_id} is corrupt: {entry.problem.message}")
        raise NotFound(f"no task {task_id}")

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
        with self._locked(create=not deps) as exists:
            if not exists:  # no board yet: every dependency is unknown
                dag.check_new_dependencies(1, deps, {}, set())
            new_id = self._allocate_id()
            wanted = dag.check_new_dependencies(
                new_id, deps, self._cache.tasks, self._cache.corrupt_ids()
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
            self._write([task], [record])
        self._changed()
        return task

    def _allocate_id(self) -> int:
        try:
            high = int((read_state(self._next_id_path, 64) or b"").strip())
        except (OSError, StorageError, ValueError):  # a link or FIFO there counts as missing
            high = 1
        return max(high, self._cache.max_file_id() + 1, 1)

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
        with self._locked():
            task = self._existing(task_id)
            if task.status != "pending":
                raise Refused(routing.not_pending(task, bool(routed) and not deps))
            added = dag.check_new_dependencies(
                task_id, deps, self._cache.tasks, self._cache.corrupt_ids()
            )
            merged = sorted(set(task.blocked_by) | set(added))
            changed = {k: v for k, v in routed.items() if getattr(task, k) != v}
            if merged == task.blocked_by and not changed:
                return task
            task = task.model_copy(
                update={"blocked_by": merged, "updated_at": utc_now(), **changed}
            )
            self._write(
                [task], [event_record(actor, "updated", task_id, blockedBy=merged, **changed)]
            )
        self._changed()
        return task

    def claim(
        self, task_id: int, owner: str, role: str | None = None, lease_s: float | None = None
    ) -> Task:
        """Claim one task for `owner` (of `role`); Refused with the reason when it is not
        claimable or not theirs to take (assigned to someone else, another role)."""
        task_id = check_id(task_id)
        check_name(owner, "owner")
        with self._locked():
            task = self._existing(task_id)
            held = self._cache.held_by(owner)
            reason = routing.claim_refusal(task, owner, role) or dag.claim_refusal(
                task, owner, self._cache.tasks, held[0] if held else None
            )
            if reason:
                raise Refused(reason)
            claimed = self._claim_locked(task, owner, "claim", lease_s)
        self._changed()
        return claimed

    def claim_next(
        self, owner: str, role: str | None = None, lease_s: float | None = None
    ) -> ClaimResult:
        """Claim the lowest claimable id `owner` (of `role`) may take, or say why there is
        none."""
        check_name(owner, "owner")
        with self._locked() as exists:
            if not exists:
                return ClaimResult(None, "no tasks on the board")
            cache = self._cache
            held = cache.held_by(owner)
            if held:
                return ClaimResult(None, f"{owner} still holds #{held[0].id}")
            task = routing.first_for(cache.pending, cache.tasks, owner, role)
            if task is None:
                return ClaimResult(None, self._idle_text(owner, role, None))
            claimed = self._claim_locked(task, owner, "claim_next", lease_s)
        self._changed()
        return ClaimResult(claimed, f"claimed #{claimed.id}")

    def _claim_locked(self, task: Task, owner: str, via: str, lease_s: float | None) -> Task:
        now, until = self.leases.claim_fields(lease_s)
        claimed = task.model_copy(
            update={
                "status": "in_progress",
                "owner": owner,
                "claim_token": self.leases.draw_token(self._cache.leases, task.id),
                "claimed_at": now,
                "lease_expires_at": until,
                "updated_at": now,
            }
        )
        self._write(
            [claimed],
            [event_record(owner, "claimed", task.id, owner=owner, via=via, subject=task.subject)],
        )
        return claimed

    def complete(
        self, task_id: int, owner: str, claim_token: str, result: str = "", actor: str | None = None
    ) -> CompleteResult:
        """Complete an in_progress task: same owner and same claim token, else Refused."""
        task_id = check_id(task_id)
        check_name(owner, "owner")
        actor = check_name(actor, "actor") if actor is not None else owner
        check_text(result, "task result")
        with self._locked():
            stale = self.leases.refusal(self._existing(task_id), owner, claim_token)
            if stale is not None:
                raise stale
            task = self._check_holder(task_id, owner)
            if not isinstance(claim_token, str) or claim_token != task.claim_token:
                raise Refused(f"wrong claim token for task {task_id}")
            self.leases.note("d", claim_token, task_id)
            done = task.model_copy(
                update={
                    "status": "completed",
                    "claim_token": None,
                    "lease_expires_at": None,
                    "result": result,
                    "updated_at": utc_now(),
                }
            )
            after = dict(self._cache.tasks)
            after[task_id] = done
            unblocked = dag.newly_unblocked(task_id, after)
            self._write(
                [done],
                [
                    event_record(
                        actor,
                        "completed",
                        task_id,
                        owner=owner,
                        result=result[:200],
                        unblocked=unblocked,
                    )
                ],
            )
        self._changed()
        return CompleteResult(done, unblocked)

    def release(self, task_id: int, owner: str, reason: str = "") -> Task:
        """Put `owner`'s in_progress task back to pending (teammate stopped or died)."""
        task_id = check_id(task_id)
        check_name(owner, "owner")
        with self._locked():
            task = self._check_holder(task_id, owner)
            self.leases.note("r", task.claim_token, task_id)
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
            self._write(
                [back], [event_record(owner, "released", task_id, owner=owner, reason=reason)]
            )
        self._changed()
        return back

    def _check_holder(self, task_id: int, owner: str) -> Task:
        task = self._existing(task_id)
        if task.status == "completed":
            raise Refused(f"task {task_id} is completed")
        if task.status == "pending":
            raise Refused(f"task {task_id} is not claimed")
        if task.owner != owner:
            raise Refused(f"task {task_id} is owned by {task.owner}")
        return task

    # ----- leases (rules in leases.py) -----
    def _expire_due(self) -> bool:
        """Take back every lease that ran out or whose owner's process is gone, in one write
        (caller holds the lock). A disk error leaves them for the next operation."""
        cache = self._cache
        due = self.leases.due(cache.leases, cache.tasks, cache.holder_names(), cache.held_by)
        if not due:
            return False
        back, events = taken_back(due, cache.tasks, iso_ms(self.leases.now_ms()))
        try:
            for exp in due:
                self.leases.note("x", exp.token, exp.task_id)
            self._write(back, events)
        except StorageError as exc:
            log.warning("cannot take back expired leases: %s", exc)
            return False
        self._expired.extend(due)
        return True

    def take_expired(self) -> list[Expiry]:
        """The leases this board instance took back (now included) since the last call."""
        with self._locked():
            taken, self._expired = self._expired, []
        return taken

    def stale_claim(self, task_id: int, owner: str, claim_token: object) -> Refused | None:
        """LeaseExpired when `claim_token` was `owner`'s claim on the task and its lease ran
        out (what complete would raise), else None."""
        with self._locked():
            return self.leases.refusal(self._existing(check_id(task_id)), owner, claim_token)

    def renew(self, owners: Iterable[str], lease_s: float | None = None) -> list[Task]:
        """Extend the live leases of `owners` from now: one write, no event, no wake-up.
        An expired lease is never renewed: it was taken back first."""
        names = [check_name(o, "owner") for o in owners]
        with self._locked() as exists:
            held = [t for n in names for t in self._cache.held_by(n)] if exists else []
            if not held:
                return []
            _, until = self.leases.claim_fields(lease_s)
            renewed = [t.model_copy(update={"lease_expires_at": until}) for t in held]
            self._write(renewed, [])
        return renewed
