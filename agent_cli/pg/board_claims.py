"""Who holds a task on PostgreSQL: claim, claim the next, complete and release.

A claim is one statement: pick the row with every claim rule in its WHERE (pending, no
owner, no unfinished dependency: `waiting = 0` for the index and the dependency rows
themselves, so a counter written wrong by hand frees nothing; the routing of
board/routing.py, the owner holding nothing), lock it (`FOR UPDATE SKIP LOCKED` for
claim_next, a wait for an explicit claim, re-checked on the row as committed), record the
fresh token (a token already drawn on this board is drawn again) and write the claim.
A completion checks owner, token and lease in its UPDATE's WHERE and lowers the `waiting`
of the tasks it unblocks in the same transaction. The refusal texts are the file board's:
when nothing was changed, the row is read again and the same rules (dag.py, routing.py)
say why.
"""

from __future__ import annotations

from collections.abc import Callable

import psycopg

from ..board import dag, routing
from ..board.eventlog import event_record
from ..board.leases import TOKEN_DRAWS, TOKEN_RE, LeaseExpired
from ..board.models import ClaimResult, CompleteResult, Task
from ..errors import NotFound, Refused
from .board_rows import NOW, T_COLS, TASK_COLS, task_of
from .board_tx import DUE_NOW, WRITE_TAIL, BoardTx, Change, OwnerBusy

RACE_RETRIES = 5  # a claimable task seen but lost to a racer: look again this often

# The dependency check is a scalar subquery on purpose: run per candidate row (an index probe
# of its own dependencies), where NOT EXISTS became an anti join that read every earlier
# task's dependency rows on each claim.

_PICK = """
    SELECT id FROM board_task
    WHERE status = 'pending' AND waiting = 0 {which}
      AND (SELECT count(*) FROM board_dependency d JOIN board_task b ON b.id = d.blocker_id
           WHERE d.task_id = board_task.id AND b.status <> 'completed') = 0
      AND (assignee IS NULL OR assignee = %(owner)s)
      AND (role_key IS NULL OR role_key = %(role_key)s::text)
      AND NOT EXISTS (SELECT 1 FROM board_task h
                      WHERE h.owner = %(owner)s AND h.status = 'in_progress')
      AND (%(ignore_due)s OR NOT {due})
    ORDER BY id LIMIT 1
    FOR UPDATE {skip}"""

_CLAIM = f"""
WITH pick AS ({{pick}}),
tok AS (
    INSERT INTO board_token (token, task_id, fate)
    SELECT %(token)s, id, 'c' FROM pick
    ON CONFLICT (token) DO NOTHING
    RETURNING task_id),
claimed AS (
    UPDATE board_task t SET status = 'in_progress', owner = %(owner)s,
        claim_token = %(token)s, claimed_at = {NOW},
        lease_expires_at = {NOW} + %(lease_ms)s::float8 * interval '1 millisecond',
        updated_at = {NOW}
    FROM tok WHERE t.id = tok.task_id
    RETURNING {T_COLS}),
changed AS (
    SELECT id, %(owner)s::text AS ev_actor, 'claimed' AS ev_action,
           json_build_object('owner', %(owner)s::text, 'via', %(via)s::text,
                             'subject', subject) AS ev_details
    FROM claimed),{WRITE_TAIL}
SELECT (SELECT id FROM pick), {DUE_NOW}, (SELECT count(*) FROM note), claimed.*
FROM (SELECT 1) AS one LEFT JOIN claimed ON true
"""
CLAIM_NEXT = _CLAIM.replace("{pick}", _PICK.format(which="", skip="SKIP LOCKED", due=DUE_NOW))
CLAIM_ID = _CLAIM.replace("{pick}", _PICK.format(which="AND id = %(id)s", skip="",
                                                 due=DUE_NOW))

COMPLETE = f"""
WITH done AS (
    UPDATE board_task SET status = 'completed', claim_token = NULL, lease_expires_at = NULL,
        result = %(result)s, updated_at = {NOW}
    WHERE id = %(id)s AND status = 'in_progress' AND owner = %(owner)s
      AND claim_token = %(token)s AND lease_expires_at > {NOW}
      AND (%(ignore_due)s OR NOT {DUE_NOW})
    RETURNING {TASK_COLS}),
tok AS (UPDATE board_token SET fate = 'd'
        WHERE token = %(token)s AND EXISTS (SELECT 1 FROM done)),
unblocked AS (SELECT board_unblock(done.id, %(graph)s) AS ids FROM done),
changed AS (
    SELECT done.id, %(actor)s::text AS ev_actor, 'completed' AS ev_action,
           json_build_object('owner', %(owner)s::text, 'result', left(%(result)s, 200),
                             'unblocked', to_json(u.ids)) AS ev_details
    FROM done, unblocked u),{WRITE_TAIL}
SELECT {DUE_NOW}, (SELECT ids FROM unblocked), (SELECT count(*) FROM note), done.*
FROM (SELECT 1) AS one LEFT JOIN done ON true
"""
RELEASE = f"""
WITH old AS (
    SELECT id, claim_token FROM board_task
    WHERE id = %(id)s AND status = 'in_progress' AND owner = %(owner)s FOR UPDATE),
back AS (
    UPDATE board_task t SET status = 'pending', owner = NULL, claim_token = NULL,
        claimed_at = NULL, lease_expires_at = NULL, updated_at = {NOW}
    FROM old WHERE t.id = old.id
    RETURNING {T_COLS}),
tok AS (UPDATE board_token k SET fate = 'r' FROM old WHERE k.token = old.claim_token)
SELECT * FROM back
"""
GET = f"SELECT {TASK_COLS} FROM board_task WHERE id = %(id)s"
HELD = (f"SELECT {TASK_COLS} FROM board_task WHERE owner = %(owner)s "
        "AND status = 'in_progress' ORDER BY id")
BLOCKERS = f"SELECT {TASK_COLS} FROM board_task WHERE id = ANY(%(ids)s::bigint[])"
# what an idle reason needs: every unfinished task, the tasks they wait on, and the count
IDLE = f"""
SELECT {TASK_COLS} FROM board_task
WHERE status <> 'completed'
   OR id IN (SELECT unnest(blocked_by) FROM board_task WHERE status = 'pending')
"""
TOKEN_FATE = "SELECT task_id, fate FROM board_token WHERE token = %(token)s"


def role_key(role: str | None) -> str | None:
    """The claimer's role as routing.same_role compares it (spaces collapsed, case ignored)."""
    return routing.normalize_role(role).casefold() if role is not None else None


def one(conn: psycopg.Connection, query: str, params: dict) -> Task | None:
    row = conn.execute(query, params).fetchone()
    return task_of(row) if row is not None else None


class PgClaims:
    """The holder-changing writes of one PgTaskBoard (it delegates to this)."""

    def __init__(self, tx: BoardTx, new_token: Callable[[], str],
                 lease_ms: Callable[[float | None], int]) -> None:
        self.tx = tx
        self._new_token = new_token
        self._lease_ms = lease_ms

    # ----- claims -----
    def claim(self, task_id: int, owner: str, role: str | None, lease_s: float | None) -> Task:
        for _ in range(RACE_RETRIES):
            try:
                task = self.tx.run(
                    lambda c: self._claim(c, task_id, owner, role, lease_s, "claim"),
                    statement=True)
            except (OwnerBusy, _Raced):
                task = None
            if task is not None:
                return task
        raise Refused(f"task {task_id} not claimed: other claims kept taking it first")

    def claim_next(self, owner: str, role: str | None, lease_s: float | None,
                   detail: str) -> ClaimResult:
        wanted: int | None = None  # SKIP LOCKED passed it over: wait for its row this time
        for _ in range(RACE_RETRIES):
            try:
                task = self.tx.run(
                    lambda c, w=wanted: self._claim(c, w, owner, role, lease_s, "claim_next",
                                                    detail),
                    statement=True)
            except (OwnerBusy, _Raced, _Taken):  # _Taken: the one it waited for is gone
                task = None
            if task is not None:
                return ClaimResult(task, f"claimed #{task.id}")
            held = self.held(owner)
            if held is not None:
                return ClaimResult(None, f"{owner} still holds #{held.id}")
            first, reason = self.look(owner, role)
            if first is None:
                return ClaimResult(None, reason)
            wanted = first  # locked by a change still under way (or one rolled back)
        return ClaimResult(None, "no claimable task: others kept taking them first")

    def _claim(self, conn: psycopg.Connection, task_id: int | None, owner: str,
               role: str | None, lease_s: float | None, via: str, detail: str = ""
               ) -> tuple[Task | None, Change | None]:
        ignore_due = not self.tx.may_sweep()
        params = self.tx.params(id=task_id, owner=owner, role_key=role_key(role),
                                lease_ms=self._lease_ms(lease_s), via=via,
                                ignore_due=ignore_due, channel=self.tx.db.channel)
        query = CLAIM_ID if task_id is not None else CLAIM_NEXT
        picked = None
        for _ in range(TOKEN_DRAWS):
            token = self._new_token()
            if not isinstance(token, str) or not TOKEN_RE.fullmatch(token):
                continue
            row = conn.execute(query, {**params, "token": token}).fetchone()
            picked, due = row[0], row[1]
            if picked is None and due and not ignore_due:
                self.tx.sweep_first()  # a lease ran out: taken back before any claim
            if picked is None:
                if task_id is not None:
                    raise _Taken(self._claim_refusal(conn, task_id, owner, role))
                return None, None
            if row[3] is not None:
                task = task_of(row[3:])
                record = event_record(owner, "claimed", task.id, owner=owner, via=via,
                                      subject=task.subject)
                return task, Change([record], {task.id: task.subject}, detail, written=True)
        raise Refused(f"task {picked or task_id} not claimed: the token generator gave only "
                      "used claim tokens")

    def _claim_refusal(self, conn: psycopg.Connection, task_id: int, owner: str,
                       role: str | None) -> str:
        """Why an explicit claim took nothing (the file board's words); "" = it raced."""
        task = one(conn, GET, {"id": task_id})
        if task is None:
            raise NotFound(f"no task {task_id}")
        held = one(conn, HELD, {"owner": owner})
        blockers = {t.id: t for t in map(task_of, conn.execute(
            BLOCKERS, {"ids": task.blocked_by}).fetchall())}
        reason = routing.claim_refusal(task, owner, role) or dag.claim_refusal(
            task, owner, blockers, held)
        if reason is None:
            raise _Raced()
        return reason

    # ----- completion, release -----
    def complete(self, task_id: int, owner: str, token: object, result: str,
                 actor: str) -> CompleteResult:
        params = self.tx.params(id=task_id, owner=owner, token=token, result=result,
                                actor=actor, graph=self.tx.graph_key,
                                channel=self.tx.db.channel)
        out, due = self.tx.run(lambda c: self._complete(c, params), statement=True)
        if due or not isinstance(out, CompleteResult):
            self.tx.sweep()  # leases left to take back, or this one ran out under us
        if isinstance(out, CompleteResult):
            return out
        raise out

    def _complete(self, conn: psycopg.Connection, params: dict):
        ignore_due = not self.tx.may_sweep()
        task_id, owner = params["id"], params["owner"]
        if isinstance(params["token"], str):
            due, unblocked, _, *row = conn.execute(
                COMPLETE, {**params, "ignore_due": ignore_due}).fetchone()
        else:
            [(due,)] = conn.execute(f"SELECT {DUE_NOW}", params).fetchall()
            row = [None]
        if row[0] is None:
            if due and not ignore_due:
                self.tx.sweep_first()  # the file board's order: leases first, then the rules
            return (self._complete_refusal(conn, params), False), None
        done = task_of(row)
        record = event_record(params["actor"], "completed", task_id, owner=owner,
                              result=params["result"][:200], unblocked=list(unblocked))
        change = Change([record], {task_id: done.subject}, written=True)
        return (CompleteResult(done, list(unblocked)), due), change

    def _complete_refusal(self, conn: psycopg.Connection, params: dict) -> Refused:
        """The file board's answer, in its order: lease expired, then the holder checks."""
        task_id, owner, token = params["id"], params["owner"], params["token"]
        task = one(conn, GET, {"id": task_id})
        if task is None:
            raise NotFound(f"no task {task_id}")
        if isinstance(token, str) and token != task.claim_token and task.status != "completed":
            fate = conn.execute(TOKEN_FATE, {"token": token}).fetchone()
            if fate is not None and fate[0] == task_id and fate[1] == "x":
                return expired(owner, task_id)
        check_holder(task, owner)
        if token != task.claim_token:
            raise Refused(f"wrong claim token for task {task_id}")
        # owner and token right: the lease ran out since this operation's sweep
        return expired(owner, task_id)

    def release(self, task_id: int, owner: str, reason: str) -> Task:
        params = self.tx.params(id=task_id, owner=owner)

        def body(conn: psycopg.Connection) -> tuple[Task, Change]:
            back = one(conn, RELEASE, params)
            if back is None:
                task = one(conn, GET, {"id": task_id})
                if task is None:
                    raise NotFound(f"no task {task_id}")
                check_holder(task, owner)
                raise _Raced()
            record = event_record(owner, "released", task_id, owner=owner, reason=reason)
            return back, Change([record], {task_id: back.subject})

        for _ in range(RACE_RETRIES):
            try:
                return self.tx.run(body)
            except _Raced:
                continue
        raise Refused(f"task {task_id} not released: it kept changing under us")

    # ----- reads the refusals need -----
    def held(self, owner: str) -> Task | None:
        rows = self.tx.read(HELD, {"owner": owner})
        return task_of(rows[0]) if rows else None

    def idle_text(self, owner: str, role: str | None, held: Task | None) -> str:
        """Why `owner` (of `role`) has nothing to claim (the file board's words)."""
        if held is not None:
            return f"{owner} holds #{held.id}"
        return self.look(owner, role)[1]

    def look(self, owner: str, role: str | None) -> tuple[int | None, str]:
        """The first task `owner` may claim now (None if none) and the idle reason:
        dag.idle_text over the unfinished tasks and what they wait on."""
        tasks = {t.id: t for t in map(task_of, self.tx.read(IDLE))}
        if not any(t.status != "completed" for t in tasks.values()):
            [(total,)] = self.tx.read("SELECT count(*) FROM board_task")
            return None, f"all {total} tasks completed" if total else "no tasks on the board"
        may_take = lambda t: routing.refusal(t, owner, role)  # noqa: E731
        first = dag.first_claimable(sorted(tasks), tasks, lambda t: may_take(t) is None)
        reason = dag.idle_text(owner, tasks, set(), None, may_take, routing.short_reason)
        return (first.id if first is not None else None), reason


class _Raced(Refused):
    """Nothing changed, yet no rule refuses: a racer changed the row meanwhile."""


class _Taken(Refused):
    """An explicit claim refused by the rules (its message is the reason)."""


def expired(owner: str, task_id: int) -> LeaseExpired:
    return LeaseExpired(
        f"lease expired: {owner}'s claim on task {task_id} ran out and the task "
        "went back to pending; claim it again")


def check_holder(task: Task, owner: str) -> None:
    """The file board's holder checks (claims.py `_check_holder`)."""
    if task.status == "completed":
        raise Refused(f"task {task.id} is completed")
    if task.status == "pending":
        raise Refused(f"task {task.id} is not claimed")
    if task.owner != owner:
        raise Refused(f"task {task.id} is owned by {task.owner}")
