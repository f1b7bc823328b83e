"""PgTaskBoard: the task board in a PostgreSQL schema, for a team whose members run on
several hosts. The same methods, models, errors and notifications as board/store.py's
TaskBoard; the database's transactions and row locks do what the file lock does there.

Every operation first takes back the leases that ran out on the database clock (board_tx.py);
claims, completions and releases are in board_claims.py; the tables in board_schema.py.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from ..board import dag, routing
from ..board.eventlog import event_record
from ..board.inputs import check_id, check_subject, check_text, check_verify
from ..board.leases import DEFAULT_LEASE_S, Expiry, OwnerGone, lease_seconds
from ..board.models import BoardSnapshot, ClaimResult, CompleteResult, Problem, Task, Verify
from ..errors import NotFound, Refused
from ..events import TaskEvent
from ..names import check_name
from .board_claims import GET, TOKEN_FATE, PgClaims, expired, one
from .board_rows import NOW, TASK_COLS, event_of, task_of, verify_json
from .board_schema import BOARD
from .board_tx import BoardTx, Change
from .db import Database
from .schema import ensure_schema

GRAPH_LOCK = "SELECT pg_advisory_xact_lock(hashtext(%s))"
STAMP = "SELECT epoch, seq FROM board_state"
ALL = f"SELECT {TASK_COLS} FROM board_task ORDER BY id"
DEPS = "SELECT id, status, blocked_by FROM board_task WHERE id = ANY(%(ids)s::bigint[])"
# every task reachable from the new dependencies: where a cycle would have to run
REACHABLE = """
WITH RECURSIVE r(id) AS (
    SELECT unnest(%(ids)s::bigint[])
    UNION
    SELECT unnest(t.blocked_by) FROM board_task t JOIN r ON t.id = r.id)
SELECT t.id, t.status, t.blocked_by FROM board_task t JOIN r ON t.id = r.id
"""
INSERT = f"""
INSERT INTO board_task (id, subject, description, blocked_by, waiting, created_at, updated_at,
                        verify, assignee, role, role_key, require_plan)
VALUES (nextval('board_task_id'), %(subject)s, %(description)s, %(deps)s, %(waiting)s,
        {NOW}, {NOW}, %(verify)s, %(assignee)s, %(role)s, %(role_key)s, %(plan)s)
RETURNING {TASK_COLS}
"""
ADD_DEPS = ("INSERT INTO board_dependency (task_id, blocker_id) "
            "SELECT %(id)s, unnest(%(deps)s::bigint[]) ON CONFLICT DO NOTHING")
REROUTE = f"""
UPDATE board_task SET blocked_by = %(deps)s, waiting = waiting + %(more)s,
    assignee = %(assignee)s, role = %(role)s, role_key = %(role_key)s,
    require_plan = %(plan)s, updated_at = {NOW}
WHERE id = %(id)s RETURNING {TASK_COLS}
"""
RENEW = f"""
UPDATE board_task SET lease_expires_at = {NOW} + %(lease_ms)s::float8 * interval '1 millisecond'
WHERE status = 'in_progress' AND owner = ANY(%(owners)s::text[])
  AND lease_expires_at > {NOW}
RETURNING {TASK_COLS}
"""
EVENTS = ("SELECT (SELECT epoch FROM board_state), time, actor, action, task_id, details, "
          "seq, n FROM board_event ORDER BY id")
RECENT = ("SELECT * FROM (SELECT (SELECT epoch FROM board_state), time, actor, action, "
          "task_id, details, seq, n, id FROM board_event ORDER BY id DESC "
          "LIMIT %(count)s) r ORDER BY id")
# each task's last write among the latest ones, oldest first (watch shows the latest first)
WRITE_ORDER = ("SELECT task_id FROM (SELECT task_id, max(id) AS last FROM board_event "
               "GROUP BY task_id ORDER BY last DESC LIMIT %(count)s) w ORDER BY last")
RECENT_WRITES = 512


class PgLeases:
    """The lease policy callers read (`board.leases.lease_s`: the renewer's period)."""

    def __init__(self, lease_s: float | None, owner_gone: OwnerGone | None) -> None:
        self.lease_s = lease_seconds(lease_s) if lease_s is not None else DEFAULT_LEASE_S
        self.owner_gone = owner_gone


class PgTaskBoard:
    """The board in `db`'s schema (created or migrated on first use). One instance per
    process is enough; its methods are thread-safe."""

    def __init__(
        self,
        db: Database,
        on_change: Callable[[], None] | None = None,
        *,
        on_event: Callable[[TaskEvent], None] | None = None,
        lease_s: float | None = None,
        clock: Callable[[], float] | None = None,
        token_factory: Callable[[], str] | None = None,
        owner_gone: OwnerGone | None = None,
    ) -> None:
        self.db = db
        ensure_schema(db, [BOARD])
        self.leases = PgLeases(lease_s, owner_gone)
        self._tx = BoardTx(db, clock, on_change, on_event, owner_gone)
        self._claims = PgClaims(self._tx, token_factory or (lambda: uuid.uuid4().hex),
                                self._lease_ms)
        self._snapshot: tuple[str, BoardSnapshot] | None = None

    def _lease_ms(self, lease_s: float | None) -> int:
        length = lease_seconds(lease_s) if lease_s is not None else self.leases.lease_s
        return max(1, round(length * 1000))

    def where(self, task_id: int | None = None) -> str:
        """Where a problem is, as Problem.path says it for a file."""
        table = f"{self.db.schema}.board_task"
        return table if task_id is None else f"{table}[{task_id}]"

    # ----- reads -----
    def stamp(self) -> str:
        """Cheap: changes on every write by any process ("" for a board never written)."""
        [(epoch, seq)] = self._tx.read(STAMP)
        return f"{epoch}:{seq}" if seq else ""

    def snapshot(self) -> BoardSnapshot:
        """Every task sorted by id, plus every problem (broken dependencies)."""
        self._tx.sweep()
        stamp = self.stamp()
        cached = self._snapshot
        if cached is not None and cached[0] == stamp:
            return cached[1]
        snap = self._build_snapshot()
        self._snapshot = (snap.stamp, snap)
        return snap

    def _build_snapshot(self) -> BoardSnapshot:
        def body(conn: psycopg.Connection) -> tuple[BoardSnapshot, None]:
            epoch, seq = conn.execute(STAMP).fetchone()
            tasks = [task_of(row) for row in conn.execute(ALL).fetchall()]
            by_id = {t.id: t for t in tasks}
            paths = {tid: self.where(tid) for tid in by_id}
            problems = dag.graph_problems(by_id, set(), paths)
            problems.sort(key=lambda p: p.task_id or 0)
            return BoardSnapshot(tasks, problems, f"{epoch}:{seq}" if seq else ""), None

        return self._tx.run(body)  # one transaction: the stamp says what was read

    def get(self, task_id: int) -> Task:
        task_id = check_id(task_id)
        self._tx.sweep()
        rows = self._tx.read(GET, {"id": task_id})
        if not rows:
            raise NotFound(f"no task {task_id}")
        return task_of(rows[0])

    def held_by(self, owner: str) -> Task | None:
        check_name(owner, "owner")
        self._tx.sweep()
        return self._claims.held(owner)

    def idle_reason(self, owner: str, role: str | None = None) -> str:
        check_name(owner, "owner")
        self._tx.sweep()
        return self._claims.idle_text(owner, role, self._claims.held(owner))

    def doctor(self) -> list[Problem]:
        """Every problem on the board (a dependency a hand edit broke)."""
        self._tx.sweep()
        return self._build_snapshot().problems

    def events(self) -> list[dict[str, Any]]:
        """Every event record, in commit order, shaped as `.tasks/events.jsonl`'s lines."""
        return [event_of(row[1:], row[0]) for row in self._tx.read(EVENTS)]

    def event_problems(self) -> list[Problem]:
        return []  # rows are written whole or not at all

    def recent_events(self, count: int) -> list[dict[str, Any]]:
        """The last `count` events, oldest first (one indexed read)."""
        if count <= 0:
            return []
        rows = self._tx.read(RECENT, {"count": int(count)})
        return [event_of(row[1:8], row[0]) for row in rows]

    def write_order(self) -> dict[int, int]:
        """Task id -> the rank of its last write among the board's recent writes (higher:
        later); {} when the board was never written."""
        rows = self._tx.read(WRITE_ORDER, {"count": RECENT_WRITES})
        return {int(task_id): rank for rank, (task_id,) in enumerate(rows, 1)}

    def file_of(self, task_id: int) -> Path | None:
        """No task lives in a file here (the verify "tracked by git" check is skipped)."""
        return None

    @property
    def lease_s(self) -> float:
        """How long a claim stays valid unless renewed (the renewer runs at a third of it)."""
        return self.leases.lease_s

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
        """Add a pending task; its id comes from a sequence and is never reused."""
        subject = check_subject(subject)
        check_text(description, "task description")
        check_name(actor, "actor")
        verify = check_verify(verify)
        routed = routing.fields(assignee, role, require_plan)
        deps = list(blocked_by)
        self._tx.sweep()

        def body(conn: psycopg.Connection) -> tuple[Task, Change]:
            wanted, waiting = [], 0
            if deps:
                conn.execute(GRAPH_LOCK, (self._tx.graph_key,))
                graph = _nodes(conn, DEPS, deps)
                wanted = dag.check_new_dependencies(0, deps, graph, set())
                waiting = sum(graph[d].status != "completed" for d in wanted)
            task = one(conn, INSERT, self._tx.params(
                subject=subject, description=description, deps=wanted, waiting=waiting,
                verify=Jsonb(verify_json(verify)) if verify else None,
                plan=routed["require_plan"], role_key=_key(routed["role"]),
                assignee=routed["assignee"], role=routed["role"]))
            assert task is not None
            if wanted:
                conn.execute(ADD_DEPS, {"id": task.id, "deps": wanted})
            record = event_record(actor, "created", task.id, subject=subject, blockedBy=wanted)
            record["details"].update({k: v for k, v in routed.items() if v})
            return task, Change([record], {task.id: subject})

        return self._tx.run(body)

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
        self._tx.sweep()

        def body(conn: psycopg.Connection) -> tuple[Task, Change | None]:
            if deps:
                conn.execute(GRAPH_LOCK, (self._tx.graph_key,))
            task = one(conn, GET + " FOR UPDATE", {"id": task_id})
            if task is None:
                raise NotFound(f"no task {task_id}")
            if task.status != "pending":
                raise Refused(routing.not_pending(task, bool(routed) and not deps))
            graph = _nodes(conn, REACHABLE, deps) if deps else {}
            added = dag.check_new_dependencies(task_id, deps, graph, set())
            merged = sorted(set(task.blocked_by) | set(added))
            changed = {k: v for k, v in routed.items() if getattr(task, k) != v}
            if merged == task.blocked_by and not changed:
                return task, None
            new = [d for d in added if d not in task.blocked_by]
            fields = {k: changed.get(k, getattr(task, k))
                      for k in ("assignee", "role", "require_plan")}
            task = one(conn, REROUTE, self._tx.params(
                id=task_id, deps=merged, assignee=fields["assignee"], role=fields["role"],
                more=sum(graph[d].status != "completed" for d in new),
                role_key=_key(fields["role"]), plan=fields["require_plan"]))
            assert task is not None
            if new:
                conn.execute(ADD_DEPS, {"id": task_id, "deps": new})
            record = event_record(actor, "updated", task_id, blockedBy=merged, **changed)
            return task, Change([record], {task_id: task.subject})

        return self._tx.run(body)

    def claim(
        self, task_id: int, owner: str, role: str | None = None, lease_s: float | None = None
    ) -> Task:
        """Claim one task for `owner` (of `role`); Refused with the reason when it is not
        claimable or not theirs to take (assigned to someone else, another role)."""
        task_id = check_id(task_id)
        check_name(owner, "owner")
        self._tx.presweep()
        return self._claims.claim(task_id, owner, role, lease_s)

    def claim_next(
        self, owner: str, role: str | None = None, lease_s: float | None = None, *,
        detail: str = "",
    ) -> ClaimResult:
        """Claim the lowest claimable id `owner` (of `role`) may take, or say why there is
        none. `detail` is what its notification says ("auto-claimed")."""
        check_name(owner, "owner")
        self._tx.presweep()
        return self._claims.claim_next(owner, role, lease_s, detail)

    def complete(
        self, task_id: int, owner: str, claim_token: str, result: str = "", actor: str | None = None
    ) -> CompleteResult:
        """Complete an in_progress task: same owner, same claim token, lease not run out."""
        task_id = check_id(task_id)
        check_name(owner, "owner")
        actor = check_name(actor, "actor") if actor is not None else owner
        check_text(result, "task result")
        self._tx.presweep()
        return self._claims.complete(task_id, owner, claim_token, result, actor)

    def release(self, task_id: int, owner: str, reason: str = "") -> Task:
        """Put `owner`'s in_progress task back to pending (teammate stopped or died)."""
        task_id = check_id(task_id)
        check_name(owner, "owner")
        self._tx.sweep()
        return self._claims.release(task_id, owner, reason)

    def verify_failed(self, task: Task, agent: str, detail: str) -> None:
        """Announce a refused completion: a notification only, nothing changes or is logged."""
        self._tx.notice(TaskEvent(agent=agent, action="verify_failed", task_id=task.id,
                                  subject=task.subject, detail=detail))

    def notices_held(self) -> AbstractContextManager[None]:
        """Hold this thread's notifications (on_event) until the block ends."""
        return self._tx.notices_held()

    # ----- leases -----
    def take_expired(self) -> list[Expiry]:
        """The leases this board instance took back (now included) since the last call."""
        self._tx.sweep()
        return self._tx.take_expired()

    def stale_claim(self, task_id: int, owner: str, claim_token: object) -> Refused | None:
        """LeaseExpired when `claim_token` was `owner`'s claim on the task and its lease ran
        out (what complete would raise), else None."""
        task = self.get(task_id)
        if not isinstance(claim_token, str) or claim_token == task.claim_token:
            return None
        fate = self._tx.read(TOKEN_FATE, {"token": claim_token})
        if not fate or fate[0][0] != task.id or task.status == "completed":
            return None
        return expired(owner, task.id) if fate[0][1] == "x" else None

    def renew(self, owners: Iterable[str], lease_s: float | None = None) -> list[Task]:
        """Extend the live leases of `owners` from now (database clock): one write, no
        event, no wake-up. An expired lease is never renewed: it was taken back first."""
        names = [check_name(o, "owner") for o in owners]
        if not names:
            return []
        self._tx.sweep()
        params = self._tx.params(owners=names, lease_ms=self._lease_ms(lease_s))

        def body(conn: psycopg.Connection) -> tuple[list[Task], Change | None]:
            renewed = [task_of(r) for r in conn.execute(RENEW, params).fetchall()]
            return renewed, Change(notify=False) if renewed else None

        renewed = self._tx.run(body)
        order = {n: i for i, n in enumerate(names)}
        return sorted(renewed, key=lambda t: (order[t.owner], t.id))


def _key(role: str | None) -> str | None:
    return routing.normalize_role(role).casefold() if role is not None else None


def _nodes(conn: psycopg.Connection, query: str, deps: list) -> dict[int, Any]:
    """{id: (status, blocked_by)} of the tasks `query` finds from the well-formed ids."""
    ids = [d for d in deps if isinstance(d, int) and not isinstance(d, bool) and 1 <= d < 1 << 63]
    rows = conn.execute(query, {"ids": ids}).fetchall() if ids else []
    return {tid: SimpleNamespace(status=status, blocked_by=list(blocked))
            for tid, status, blocked in rows}
