"""`agent-cli board init|status|migrate` against the database: the raw copies of a team's
state between a file board (`board_dump.Dump`) and the team's schema.

Into the database: one transaction that locks the team's tables, checks they are empty (a
non-empty target is refused, nothing written) and inserts every row as it was (ids, owners,
tokens, leases, events in order, inbox numbers and cursors), so a claim token ever drawn
stays drawn. Out of the database: one REPEATABLE READ snapshot, written into a fresh
directory that is then moved into place.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from psycopg import sql
from psycopg.types.json import Json
from pydantic import ValidationError

from ..errors import UserError
from ..names import NAME_RE
from ..team.mailbox import parse_line
from ..team.protocol import ProtocolRequest
from ..team.roster import Member
from .board_dump import Dump, Inbox, write_files
from .board_rows import TASK_COLS, event_of, task_of, verify_json
from .db import Database, mask_url
from .schema import versions
from .stores import COMPONENTS, open_database

T = TypeVar("T")
# the tables a migration fills, in the order their rows must go in (foreign keys)
TABLES = ("board_task", "board_dependency", "board_token", "board_event", "inbox_head",
          "inbox_message", "inbox_cursor", "inbox_delivered", "roster_member",
          "protocol_request", "protocol_log")
COUNTED = {"tasks": "board_task", "events": "board_event", "messages": "inbox_message",
           "members": "roster_member", "protocol requests": "protocol_request"}
KEPT = {"README.md", ".lock"}  # what an unused .tasks/ or .team/ may hold (README is tracked)


def init(url: str, team: str) -> tuple[str, dict[str, int], dict[str, int]]:
    """Create or migrate team `team`'s schema: (schema, versions before, versions after)."""
    from .db import schema_for_team

    probe = Database(url, schema_for_team(team))
    try:
        before = versions(probe)
    finally:
        probe.close()
    db = open_database(url, team)
    try:
        return db.schema, before, versions(db)
    finally:
        db.close()


def counts(db: Database) -> dict[str, int]:
    """How many rows of each kind the team's schema holds."""
    query = sql.SQL(", ").join(
        sql.SQL("(SELECT count(*) FROM {})").format(sql.Identifier(t)) for t in COUNTED.values())
    [row] = db.execute(sql.SQL("SELECT ") + query)
    return dict(zip(COUNTED, (int(n) for n in row), strict=True))


def known_versions() -> dict[str, int]:
    return {c.name: c.version for c in COMPONENTS}


# ----- files -> database -------------------------------------------------------------------

def into_database(dump: Dump, db: Database) -> None:
    """Insert `dump` into `db`'s (migrated) schema in one transaction; UserError when the
    team there already has any state (nothing written), or a kept task depends on one that
    is not copied."""
    _check_dependencies(dump)
    with db.transaction() as conn:
        conn.execute(sql.SQL("LOCK TABLE {} IN EXCLUSIVE MODE").format(
            sql.SQL(", ").join(sql.Identifier(t) for t in TABLES)))
        refuse_busy(db, _counts(conn))
        _insert_board(conn, dump)
        _insert_team(conn, dump)
        conn.execute("SELECT pg_notify(%s, 'board')", (db.channel,))


def refuse_busy(db: Database, found: dict[str, int]) -> None:
    """UserError when the team's schema holds anything (`found`: counts by kind)."""
    busy = [f"{n} {kind}" for kind, n in found.items() if n]
    if busy:
        raise UserError(f"board migrate: team schema {db.schema} at {mask_url(db.url)} is "
                        f"not empty ({', '.join(busy)}): nothing copied")


def _counts(conn: Any) -> dict[str, int]:
    out = {}
    for kind, table in {**COUNTED, "claim tokens": "board_token"}.items():
        (n,) = conn.execute(sql.SQL("SELECT count(*) FROM {}").format(
            sql.Identifier(table))).fetchone()
        out[kind] = int(n)
    return out


def _check_dependencies(dump: Dump) -> None:
    ids = {t.id for t in dump.tasks}
    for task in dump.tasks:
        missing = [d for d in task.blocked_by if d not in ids]
        if missing:
            raise UserError(f"board migrate: task {task.id} depends on task {missing[0]}, "
                            "which is not copied (see above): fix or move it, nothing copied")


def _insert_board(conn: Any, dump: Dump) -> None:
    from .board import _key

    status = {t.id: t.status for t in dump.tasks}
    for t in dump.tasks:
        waiting = sum(1 for d in t.blocked_by if status[d] != "completed")
        conn.execute(
            "INSERT INTO board_task (id, subject, description, status, owner, blocked_by, "
            "waiting, created_at, updated_at, claimed_at, claim_token, lease_expires_at, "
            "result, verify, assignee, role, role_key, require_plan) VALUES "
            "(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
            (t.id, t.subject, t.description, t.status, t.owner, t.blocked_by, waiting,
             t.created_at, t.updated_at, t.claimed_at, t.claim_token, t.lease_expires_at,
             t.result, Json(verify_json(t.verify)) if t.verify else None, t.assignee, t.role,
             _key(t.role), t.require_plan))
    with conn.cursor() as cur:
        cur.executemany("INSERT INTO board_dependency (task_id, blocker_id) VALUES (%s, %s)",
                        [(t.id, d) for t in dump.tasks for d in t.blocked_by])
        cur.executemany("INSERT INTO board_token (token, task_id, fate) VALUES (%s, %s, %s)",
                        [(tok, tid, fate) for tok, (tid, fate) in dump.tokens.items()])
        cur.executemany(
            "INSERT INTO board_event (seq, n, time, actor, action, task_id, details) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s::json)", _event_rows(dump.events))
    seq = max((r[0] for r in _event_rows(dump.events)), default=0)
    conn.execute("UPDATE board_state SET seq = %s", (max(seq, 1 if dump.tasks else 0),))
    if dump.next_id > 1:
        conn.execute("SELECT setval('board_task_id', %s)", (dump.next_id - 1,))


def _event_rows(events: list[dict[str, Any]]) -> list[tuple]:
    """(seq, n, ...) per record: the records of one board write (same id before its `/n`)
    share a seq, in the order they were written."""
    rows, seq, last, n = [], 0, None, 0
    for r in events:
        write = str(r.get("id", "")).rpartition("/")[0] or None
        if write is None or write != last:
            seq, n = seq + 1, 0
        else:
            n += 1
        last = write
        rows.append((seq, n, r["time"], r["actor"], r["action"], r["task_id"],
                     json.dumps(r["details"], ensure_ascii=False)))
    return rows


def _insert_team(conn: Any, dump: Dump) -> None:
    with conn.cursor() as cur:
        for name, inbox in dump.inboxes.items():
            if not inbox.messages:
                continue
            cur.executemany(
                "INSERT INTO inbox_message (inbox, seq, id, body) VALUES (%s, %s, %s, %s::jsonb)",
                [(name, n, m.id, m.to_line()) for n, m in enumerate(inbox.messages, 1)])
            cur.execute("INSERT INTO inbox_head (inbox, last_seq) VALUES (%s, %s)",
                        (name, len(inbox.messages)))
            if inbox.cursor:
                cur.execute("INSERT INTO inbox_cursor (inbox, seq) VALUES (%s, %s)",
                            (name, inbox.cursor))
            cur.executemany("INSERT INTO inbox_delivered (inbox, id) VALUES (%s, %s)",
                            [(name, i) for i in sorted(inbox.delivered)])
        cur.executemany(
            "INSERT INTO roster_member (name, data, host, pid) VALUES (%s, %s::jsonb, %s, %s)",
            [(m.name, json.dumps(m.model_dump()), m.host, m.pid) for m in dump.members])
        cur.executemany(
            "INSERT INTO protocol_request (id, kind, sender, target, status, data) "
            "VALUES (%s, %s, %s, %s, %s, %s::jsonb)",
            [(r.id, r.kind, r.sender, r.target, r.status, r.model_dump_json())
             for r in dump.requests])
        cur.executemany("INSERT INTO protocol_log (record) VALUES (%s)",
                        [(Json(r),) for r in dump.protocol_log])


# ----- database -> files -------------------------------------------------------------------

def from_database(db: Database) -> Dump:
    """The team's state in `db`, read in one consistent snapshot."""
    dump = Dump()
    with db.transaction() as conn:
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        epoch, seq = conn.execute("SELECT epoch, seq FROM board_state").fetchone()
        dump.stamp = (epoch, int(seq))
        dump.tasks = _rows(dump, "board_task", task_of, conn.execute(
            f"SELECT {TASK_COLS} FROM board_task ORDER BY id").fetchall())
        last, called = conn.execute("SELECT last_value, is_called FROM board_task_id").fetchone()
        dump.next_id = int(last) + 1 if called else int(last)
        dump.events = [event_of(r, epoch) for r in conn.execute(
            "SELECT time, actor, action, task_id, details, seq, n FROM board_event "
            "ORDER BY id").fetchall()]
        dump.tokens = {tok: (int(tid), fate.strip()) for tok, tid, fate in conn.execute(
            "SELECT token, task_id, fate FROM board_token ORDER BY task_id, token").fetchall()}
        dump.members = _rows(dump, "roster_member", lambda r: Member.model_validate(r[0]),
                             conn.execute("SELECT data FROM roster_member ORDER BY joined"))
        _read_inboxes(conn, dump)
        dump.requests = _rows(dump, "protocol_request",
                              lambda r: ProtocolRequest.model_validate(r[0]),
                              conn.execute("SELECT data FROM protocol_request ORDER BY seq"))
        dump.protocol_log = [r for (r,) in conn.execute(
            "SELECT record FROM protocol_log ORDER BY seq").fetchall()]
    return dump


def _rows(dump: Dump, table: str, make: Callable[[Any], T], rows: Iterable[Any]) -> list[T]:
    """`make(row)` of each row; a row that is not one (written by hand) is named, left out."""
    out = []
    for number, row in enumerate(rows, 1):
        try:
            out.append(make(row))
        except (ValidationError, ValueError, TypeError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else "invalid"
            dump.problems.append(f"{table} row {number}: {first[:120]}; not copied")
    return out


def _read_inboxes(conn: Any, dump: Dump) -> None:
    cursors = dict(conn.execute("SELECT inbox, seq FROM inbox_cursor").fetchall())
    delivered: dict[str, set[str]] = {}
    for inbox, msg_id in conn.execute("SELECT inbox, id FROM inbox_delivered").fetchall():
        delivered.setdefault(inbox, set()).add(msg_id)
    for inbox, body in conn.execute(
            "SELECT inbox, body::text FROM inbox_message ORDER BY inbox, seq").fetchall():
        try:
            if not NAME_RE.fullmatch(inbox):
                raise ValueError("not an agent name")
            msg = parse_line(body.encode("utf-8"), inbox)
        except ValueError as exc:
            dump.problems.append(f"inbox_message of {inbox!r}: {exc}; not copied")
            continue
        dump.inboxes.setdefault(inbox, Inbox()).messages.append(msg)
    for name, inbox in dump.inboxes.items():
        inbox.delivered = delivered.get(name, set())
        inbox.cursor = min(int(cursors.get(name, 0)), len(inbox.messages))
        # the files keep delivered ids in transcripts: a delivered run right past the cursor
        # is acknowledged instead, so `inbox` shows the same unread messages on both sides
        while inbox.cursor < len(inbox.messages) and \
                inbox.messages[inbox.cursor].id in inbox.delivered:
            inbox.cursor += 1


def files_in_use(workdir: Path) -> list[str]:
    """What makes `workdir`'s .tasks/ or .team/ a board already ([] when unused)."""
    used = []
    for part in (".tasks", ".team"):
        path = workdir / part
        if os.path.islink(path) or (os.path.lexists(path) and not path.is_dir()):
            used.append(part)
            continue
        if path.is_dir():
            used += [f"{part}/{n}" for n in sorted(os.listdir(path)) if n not in KEPT]
    return used


def refuse_used(workdir: Path) -> None:
    """UserError when `workdir` already has a board (files_in_use)."""
    used = files_in_use(workdir)
    if used:
        raise UserError(f"board migrate: {workdir} already has a board ({', '.join(used[:3])}"
                        f"{' ...' if len(used) > 3 else ''}): nothing copied")


def into_files(dump: Dump, workdir: Path) -> None:
    """Write `dump` as `workdir`'s .tasks/ and .team/: built in a fresh directory next to
    them, then moved in (an unused .tasks/ or .team/ and its README are replaced)."""
    refuse_used(workdir)
    fresh = Path(tempfile.mkdtemp(prefix=".agent-cli-migrate-", dir=workdir))
    try:
        write_files(dump, fresh)
        for part in (".tasks", ".team"):
            readme = workdir / part / "README.md"
            if readme.is_file() and not readme.is_symlink():
                shutil.copy2(readme, fresh / part / "README.md")
        os.sync()
        _move_in(fresh, workdir)
    finally:
        shutil.rmtree(fresh, ignore_errors=True)


def _move_in(fresh: Path, workdir: Path) -> None:
    """Swap each unused directory for the new one; undone if any move fails."""
    done: list[tuple[Path, Path | None]] = []
    try:
        for part in (".tasks", ".team"):
            target, old = workdir / part, None
            if os.path.lexists(target):
                old = fresh / f"old{part}"
                os.rename(target, old)
            done.append((target, old))
            os.rename(fresh / part, target)
    except OSError as exc:
        for target, old in reversed(done):
            if not os.path.lexists(fresh / target.name):  # the new one went in: take it out
                os.rename(target, fresh / target.name)
            if old is not None:
                os.rename(old, target)
        raise UserError(f"board migrate: cannot move the copy into {workdir}: "
                        f"{exc.strerror or exc}") from None
