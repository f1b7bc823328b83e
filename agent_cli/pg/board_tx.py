"""The PostgreSQL board's transactions: each change with its event rows, its stamp bump and
its NOTIFY in one transaction, told to this process (on_change, then on_event) in commit
order, and the lease sweep every operation starts with.

A claim or a completion is one statement in autocommit that does all of it (board_claims.py);
any other change runs its statements after BEGIN, then one last statement bumps
`board_state.seq`, inserts the event rows and notifies the team's channel, and commits
(pipelined: BEGIN goes out with the first statement, the last with COMMIT). The stamp's row is
taken last, so it is held only until the commit, and event ids follow commit order.
This instance's changes run one at a time (its commit lock, like the file board's in-process
lock), so its notifications queue in commit order, and a thread never waits on the server for
a row another thread of this instance holds. Other processes run concurrently: a deadlock the
server breaks is retried (the body runs again from the start); any other server failure is
one line (StorageError), the change rolled back.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import psycopg
from psycopg import errors
from psycopg.pq import TransactionStatus
from psycopg.types.json import Json

from ..board.announce import announcement
from ..board.eventlog import event_record
from ..board.leases import Expiry, OwnerGone
from ..board.notify import OrderedNotices
from ..events import TaskEvent
from .board_rows import NOW, iso, now_param
from .board_schema import ONE_PER_OWNER
from .db import Database, storage_error

T = TypeVar("T")
RETRIES = 8

FINAL = f"""
WITH s AS (UPDATE board_state SET seq = seq + 1 RETURNING epoch, seq),
e AS (INSERT INTO board_event (seq, n, time, actor, action, task_id, details)
      SELECT s.seq, r.n, {NOW}, r.actor, r.action, r.task_id, r.details
      FROM s, json_to_recordset(%(records)s::json)
           AS r(n integer, actor text, action text, task_id bigint, details json)
      ORDER BY r.n)
SELECT s.epoch, s.seq, CASE WHEN %(notify)s THEN pg_notify(%(channel)s, 'board') END FROM s
"""

# The tail of a claim's or a completion's statement: after its `changed` CTE (the task's
# `id`, `ev_actor`, `ev_action`, `ev_details`; no row: nothing changed), bump the stamp, log
# the event, notify; `(SELECT count(*) FROM note)` in the final SELECT makes it run.
WRITE_TAIL = f"""
stamp AS (UPDATE board_state SET seq = seq + 1 WHERE EXISTS (SELECT 1 FROM changed)
          RETURNING seq),
ev AS (INSERT INTO board_event (seq, n, time, actor, action, task_id, details)
       SELECT stamp.seq, 0, {NOW}, c.ev_actor, c.ev_action, c.id, c.ev_details
       FROM stamp, changed c),
note AS (SELECT pg_notify(%(channel)s, 'board') FROM stamp)"""

DUE = f"""
SELECT EXISTS (SELECT 1 FROM board_task
               WHERE status = 'in_progress' AND lease_expires_at <= {NOW}),
       CASE WHEN %(holders)s THEN (SELECT array_agg(DISTINCT owner) FROM board_task
                                   WHERE status = 'in_progress') END
"""

EXPIRE = f"""
WITH due AS (
    SELECT id, subject, owner, claim_token, lease_expires_at FROM board_task
    WHERE status = 'in_progress'
      AND (lease_expires_at <= {NOW} OR owner = ANY(%(gone)s::text[]))
    ORDER BY id FOR UPDATE SKIP LOCKED),
back AS (
    UPDATE board_task t SET status = 'pending', owner = NULL, claim_token = NULL,
        claimed_at = NULL, lease_expires_at = NULL, updated_at = {NOW}
    FROM due WHERE t.id = due.id),
tok AS (UPDATE board_token k SET fate = 'x' FROM due WHERE k.token = due.claim_token)
SELECT due.id, due.subject, due.owner, due.claim_token, due.lease_expires_at,
       due.lease_expires_at <= {NOW}, {NOW}
FROM due ORDER BY due.id
"""


DUE_NOW = (f"EXISTS (SELECT 1 FROM board_task WHERE status = 'in_progress' "
           f"AND lease_expires_at <= {NOW})")
SWEEPS = 3  # leases taken back before one operation, at most (a locked row may stay due)


class OwnerBusy(Exception):
    """A claim lost to another claim by the same owner (the one-per-owner index)."""


class SweepFirst(Exception):
    """Leases ran out (the operation's own statement saw it): take them back, run again."""


@dataclass
class Change:
    """What a transaction changed: its events.jsonl-shaped records, the subject of each task
    they name (for the notifications), and what the notifications say instead ("auto-claimed").
    `notify` False: a write nobody needs waking for (a lease renewal). `written`: the body's
    own statement already bumped the stamp and wrote the records (a claim, a completion)."""

    records: list[dict[str, Any]] = field(default_factory=list)
    subjects: dict[int, str] = field(default_factory=dict)
    detail: str = ""
    notify: bool = True
    written: bool = False


class _Subject:
    def __init__(self, subject: str) -> None:
        self.subject = subject


class BoardTx:
    """Transactions of one PgTaskBoard instance (see the module docstring). Thread-safe."""

    def __init__(self, db: Database, clock: Callable[[], float] | None,
                 on_change: Callable[[], None] | None,
                 on_event: Callable[[TaskEvent], None] | None,
                 owner_gone: OwnerGone | None) -> None:
        self.db = db
        self.clock = clock
        self.owner_gone = owner_gone
        self.graph_key = f"{db.schema}:board-graph"
        self._on_change = on_change
        self._notices = OrderedNotices(on_event)
        self._commit = threading.Lock()
        self._expired: list[Expiry] = []
        self._expired_lock = threading.Lock()
        self._local = threading.local()  # .sweeps: taken back during this thread's run

    def params(self, **kw: Any) -> dict[str, Any]:
        return {"now": now_param(self.clock), **kw}

    # ----- reads -----
    def read(self, query: str, params: dict[str, Any] | None = None) -> list[tuple]:
        """One read-only statement in autocommit (no BEGIN/COMMIT round trips)."""
        try:
            cur = self.db.conn().execute(query, self.params(**(params or {})))
            return cur.fetchall() if cur.description else []
        except psycopg.Error as exc:
            raise storage_error(self.db, exc) from None

    # ----- changes -----
    def run(self, body: Callable[[psycopg.Connection], tuple[T, Change | None]], *,
            statement: bool = False) -> T:
        """Run `body` in a transaction (again after a deadlock); its Change committed with
        the stamp, events and NOTIFY, then announced. Refusals raised by `body` roll back.
        `statement`: the body is one autocommit statement that writes its Change itself."""
        sweeps = failures = 0
        while True:
            self._local.sweeps = sweeps  # what sweep_first reads (a nested run resets it)
            try:
                result, change = self._once(body, statement)
            except SweepFirst:
                sweeps += 1
                self.sweep()
                continue
            except (errors.DeadlockDetected, errors.SerializationFailure) as exc:
                failures += 1
                if failures >= RETRIES:
                    raise storage_error(self.db, exc) from None
                continue
            except errors.UniqueViolation as exc:
                if exc.diag.constraint_name == ONE_PER_OWNER:
                    raise OwnerBusy() from None
                raise storage_error(self.db, exc) from None
            except psycopg.Error as exc:
                raise storage_error(self.db, exc) from None
            if change is not None and change.records:
                self._announce()
            return result

    def _once(self, body: Callable[[psycopg.Connection], tuple[T, Change | None]],
              statement: bool) -> tuple[T, Change | None]:
        with self._commit:
            conn = self.db.conn()
            try:
                if statement:
                    result, change = body(conn)
                else:
                    with conn.pipeline() as pipe:
                        conn.execute("BEGIN")
                        result, change = body(conn)
                        if change is not None and not change.written:
                            self._final(conn, change)
                        conn.execute("COMMIT")
                        pipe.sync()
            except BaseException:
                _rollback(conn)
                raise
            if change is not None and change.records:  # committed: queued in commit order
                by_id = {tid: _Subject(s) for tid, s in change.subjects.items()}
                self._notices.enqueue(
                    announcement(r, by_id.get(r["task_id"]), change.detail)  # type: ignore[arg-type]
                    for r in change.records)
        return result, change

    def _final(self, conn: psycopg.Connection, change: Change) -> None:
        records = [{"n": n, "actor": r["actor"], "action": r["action"],
                    "task_id": r["task_id"], "details": r["details"]}
                   for n, r in enumerate(change.records)]
        conn.execute(FINAL, self.params(records=Json(records), channel=self.db.channel,
                                        notify=change.notify and bool(records)))

    def _announce(self) -> None:
        if self._on_change is not None:
            self._on_change()
        self._notices.flush()

    def notice(self, event: TaskEvent) -> None:
        """A notification that is not a change (nothing written, nothing logged)."""
        self._notices.enqueue([event])
        self._notices.flush()

    def notices_held(self):
        return self._notices.held()

    # ----- leases -----
    @property
    def folded(self) -> bool:
        """Whether claims and completions check for run-out leases in their own statement
        (DUE_NOW) instead of a sweep first: always, unless owners' liveness must be asked."""
        return self.owner_gone is None

    def presweep(self) -> None:
        """The sweep before a claim or completion, when it is not folded into them."""
        if not self.folded:
            self.sweep()

    def may_sweep(self) -> bool:
        """Whether the running body may still ask for a sweep first (SWEEPS at most: then it
        goes on, and the leases left are taken back by the next operation)."""
        return getattr(self._local, "sweeps", SWEEPS) < SWEEPS

    def sweep_first(self) -> None:
        """Called by a body that saw run-out leases and changed nothing: sweep, run again."""
        if self.may_sweep():
            raise SweepFirst()

    def sweep(self) -> None:
        """Take back every lease that ran out (database clock) or whose owner is provably
        gone, in one transaction with one lease_expired event each: what every board
        operation does first, whoever asks. Nothing due costs one indexed read."""
        [(due, holders)] = self.read(DUE, {"holders": self.owner_gone is not None})
        gone = self.owner_gone(holders) if self.owner_gone is not None and holders else {}
        if not due and not gone:
            return
        taken = self.run(lambda conn: self._expire(conn, gone))
        with self._expired_lock:
            self._expired.extend(taken)

    def _expire(self, conn: psycopg.Connection, gone: dict[str, str]
                ) -> tuple[list[Expiry], Change | None]:
        rows = conn.execute(EXPIRE, self.params(gone=sorted(gone))).fetchall()
        if not rows:
            return [], None
        taken, change = [], Change()
        for tid, subject, owner, token, lease, ran_out, now in rows:
            reason = "lease ran out" if ran_out else gone.get(owner, "lease ran out")
            exp = Expiry(tid, subject, owner, token, iso(lease) or "", reason)
            taken.append(exp)
            change.subjects[tid] = subject
            change.records.append(event_record(
                "host", "lease_expired", tid, owner=owner, token=token,
                lease_expires_at=exp.lease_expires_at, expired_at=iso(now), reason=reason))
        return taken, change

    def take_expired(self) -> list[Expiry]:
        with self._expired_lock:
            taken, self._expired = self._expired, []
        return taken


def _rollback(conn: psycopg.Connection) -> None:
    if conn.closed or conn.broken or conn.info.transaction_status == TransactionStatus.IDLE:
        return
    try:
        conn.execute("ROLLBACK")
    except psycopg.Error:
        pass
