"""Protocol requests (shutdown, plan approval) on PostgreSQL: the file store's rules, rows.

Same ProtocolRequest model, same matching and refusals as team/protocol.py: a response
resolves a request only if it exists, the kind matches, the responder is its target, the
recipient its sender, and it is pending and unexpired; the same response redelivered is
idempotent, another one a duplicate. A resolve holds the request's row lock from its read to
its write, so racing responses from any number of processes resolve it once. Expiry is on
the database clock unless a `clock` is injected (tests). Every decision is a row of
`protocol_log`, a refusal included (written after its transaction rolled back).
"""

from __future__ import annotations

import json
import logging
import math
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from pydantic import ValidationError

from ..errors import CorruptFile, NotFound, Refused, UserError
from ..names import check_name
from ..team.protocol import (
    DEFAULT_TTL_S,
    KINDS,
    ProtocolRequest,
    RequestExpired,
    format_ts,
    short_id,
)
from ..team.protocol import ProtocolStore as _FileStore
from .db import Database

log = logging.getLogger(__name__)
# what every read takes: the columns the queries filter on, then the data the host acts on
ROW = "id, kind, sender, target, status, data::text"


class _Refusal(Exception):
    """Raised inside a transaction to roll it back; logged and re-raised as `error`."""

    def __init__(self, error: Refused, request_id: object, facts: dict[str, Any]) -> None:
        self.error, self.request_id, self.facts = error, request_id, facts


class PgProtocolStore:
    """The team's protocol requests in `db`. `clock` (aware UTC) replaces the database's."""

    def __init__(self, db: Database, clock: Callable[[], datetime] | None = None) -> None:
        self.db = db
        self._clock = clock

    # ---- reading ---------------------------------------------------------------------

    def load(self) -> list[ProtocolRequest]:
        """Every request in creation order; CorruptFile naming a row that is not a request
        (readers fail closed: a plan gate must not open on state it cannot read)."""
        rows = self.db.execute("SELECT " + ROW + " FROM protocol_request ORDER BY seq")
        return [self._parse(r) for r in rows]

    def get(self, request_id: str) -> ProtocolRequest:
        rows = self.db.execute("SELECT " + ROW + " FROM protocol_request WHERE id = %s",
                               (str(request_id),))
        if not rows:
            raise NotFound(f"no protocol request {short_id(request_id)}")
        return self._parse(rows[0])

    def latest_plan(self, target: str) -> ProtocolRequest | None:
        """The most recently created plan_approval request from teammate `target`."""
        check_name(target, "teammate name")
        rows = self.db.execute(
            "SELECT " + ROW + " FROM protocol_request WHERE kind = 'plan_approval' "
            "AND sender = %s ORDER BY seq DESC LIMIT 1", (target,))
        return self._parse(rows[0]) if rows else None

    def pending(self, kind: str | None = None, target: str | None = None) -> list[ProtocolRequest]:
        """Unanswered, unexpired requests, optionally of one kind and/or for one target."""
        with self.db.transaction() as conn:
            now = self._now(conn)
            rows = conn.execute(
                "SELECT " + ROW + " FROM protocol_request WHERE status = 'pending' "
                "AND (%(kind)s::text IS NULL OR kind = %(kind)s) "
                "AND (%(target)s::text IS NULL OR target = %(target)s) ORDER BY seq",
                {"kind": kind, "target": target}).fetchall()
        found = [self._parse(r) for r in rows]
        return [r for r in found if not r.expired(now)]

    def has_expired(self, req: ProtocolRequest) -> bool:
        """True when `req` is still pending but its response window has closed."""
        if req.status != "pending":
            return False
        with self.db.transaction() as conn:
            return req.expired(self._now(conn))

    # ---- writing ---------------------------------------------------------------------

    def create(self, kind: str, sender: str, target: str, content: str = "",
               ttl_s: float = DEFAULT_TTL_S,
               task: tuple[int, str | None] | None = None) -> ProtocolRequest:
        """Store a new pending request (call before sending its message) and return it."""
        if kind not in KINDS:
            raise UserError(f"unknown protocol kind {kind!r} (use one of: {', '.join(KINDS)})")
        check_name(sender, "sender name")
        check_name(target, "target name")
        if sender == target:
            raise UserError(f"{sender} cannot send a {kind} request to itself")
        if not isinstance(content, str):
            raise UserError("request content must be text")
        if (isinstance(ttl_s, bool) or not isinstance(ttl_s, int | float)
                or not (math.isfinite(ttl_s) and ttl_s > 0)):
            raise UserError(f"invalid ttl {ttl_s!r}: use a positive number of seconds")
        with self.db.transaction() as conn:
            now = self._now(conn)
            req = ProtocolRequest(
                id=uuid.uuid4().hex, kind=kind, sender=sender, target=target,
                content=content, created_at=format_ts(now),
                expires_at=format_ts(now + timedelta(seconds=ttl_s)),
                task_id=task[0] if task else None,
                task_claimed_at=task[1] if task else None)
            conn.execute(
                "INSERT INTO protocol_request (id, kind, sender, target, status, data) "
                "VALUES (%s, %s, %s, %s, 'pending', %s::jsonb)",
                (req.id, kind, sender, target, req.model_dump_json()))
            self._log(conn, now, "created", req.id, kind=kind, sender=sender, target=target)
            _notify(conn, self.db)
        return req

    def resolve(self, request_id: str, kind: str, responder: str, recipient: str,
                approve: bool, resolution: str = "",
                response_id: str | None = None) -> ProtocolRequest:
        """Answer a pending request. Refused (logged, nothing changed) on any mismatch."""
        check_name(responder, "responder name")
        check_name(recipient, "recipient name")
        if not isinstance(approve, bool):
            raise UserError("approve must be true or false")
        facts = {"kind": kind, "responder": responder, "recipient": recipient,
                 "approve": approve, "response_id": response_id}
        try:
            with self.db.transaction() as conn:
                return self._resolve(conn, str(request_id), facts, resolution)
        except _Refusal as refusal:
            self._log_alone("rejected", refusal.request_id, reason=str(refusal.error),
                            **refusal.facts)
            log.warning("protocol response rejected: %s", refusal.error)
            raise refusal.error from None

    def _resolve(self, conn: Any, request_id: str, facts: dict[str, Any],
                 resolution: str) -> ProtocolRequest:
        row = conn.execute("SELECT " + ROW + " FROM protocol_request WHERE id = %s FOR UPDATE",
                           (request_id,)).fetchone()
        if row is None:
            raise _Refusal(Refused(f"no protocol request {short_id(request_id)}"),
                           request_id, facts)
        try:
            req = self._parse(row)
        except CorruptFile as exc:
            raise _Refusal(Refused(f"cannot resolve {short_id(request_id)}: {exc}"),
                           request_id, facts) from None
        reason = _FileStore._mismatch(req, facts["kind"], facts["responder"],
                                      facts["recipient"])
        response_id = facts["response_id"]
        now = self._now(conn)
        if reason is None and req.status != "pending":
            if response_id is not None and response_id == req.response_id:
                self._log(conn, now, "redelivered", req.id, **facts)
                return req
            reason = f"request {short_id(req.id)} is already {req.status} (duplicate response)"
        if reason is None and req.expired(now):
            reason = f"request {short_id(req.id)} expired at {req.expires_at}"
            raise _Refusal(RequestExpired(reason, req), req.id, facts)
        if reason is not None:
            raise _Refusal(Refused(reason), req.id, facts)
        done = req.model_copy(update={
            "status": "approved" if facts["approve"] else "rejected",
            "resolution": resolution, "resolved_at": format_ts(now),
            "response_id": response_id})
        self._put(conn, done)
        self._log(conn, now, "accepted", req.id, **facts)
        return done

    def close_pending(self, kind: str, target: str, resolution: str,
                      skip: str | None = None) -> list[ProtocolRequest]:
        """Approve, as `target`, every pending unexpired `kind` request for it (except
        `skip`): the target is already down. Returns the requests closed."""
        if kind not in KINDS:
            raise UserError(f"unknown protocol kind {kind!r} (use one of: {', '.join(KINDS)})")
        check_name(target, "target name")
        closed = []
        with self.db.transaction() as conn:
            now = self._now(conn)
            rows = conn.execute(
                "SELECT " + ROW + " FROM protocol_request WHERE status = 'pending' "
                "AND kind = %s AND target = %s ORDER BY seq FOR UPDATE",
                (kind, target)).fetchall()
            for row in rows:
                req = self._parse(row)
                if req.id == skip or req.expired(now):
                    continue
                done = req.model_copy(update={
                    "status": "approved", "resolution": resolution,
                    "resolved_at": format_ts(now), "response_id": uuid.uuid4().hex})
                self._put(conn, done)
                self._log(conn, now, "closed", req.id, kind=kind, target=target,
                          reason=resolution)
                closed.append(done)
        return closed

    def log(self) -> list[dict]:
        """The decision log, oldest first (the file store's protocol.log.jsonl)."""
        return [r[0] for r in self.db.execute("SELECT record FROM protocol_log ORDER BY seq")]

    # ---- internals -------------------------------------------------------------------

    def _parse(self, row: tuple) -> ProtocolRequest:
        """The request a row (ROW's columns) holds. Its data must agree with the columns the
        queries filter on: a row filed as alice's but holding bob's approval, or pending
        data under a status that hides it, is not a request (readers fail closed)."""
        table = f"{self.db.schema}.protocol_request"
        try:
            req = ProtocolRequest.model_validate_json(row[-1])
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "request"
            raise CorruptFile(table, f"a row is not a request ({where}: {first['msg']})") \
                from None
        if tuple(row[:-1]) != (req.id, req.kind, req.sender, req.target, req.status):
            raise CorruptFile(table, f"the row {row[0]!r} is not a request (its columns and "
                                     "its data disagree)")
        return req

    def _now(self, conn: Any) -> datetime:
        if self._clock is not None:
            return self._clock()
        return conn.execute("SELECT clock_timestamp()").fetchone()[0]

    def _put(self, conn: Any, req: ProtocolRequest) -> None:
        conn.execute("UPDATE protocol_request SET status = %s, data = %s::jsonb WHERE id = %s",
                     (req.status, req.model_dump_json(), req.id))
        _notify(conn, self.db)

    def _log(self, conn: Any, now: datetime, outcome: str, request_id: object,
             **fields: Any) -> None:
        record = {"ts": format_ts(now), "outcome": outcome, "request_id": request_id,
                  **fields}
        conn.execute("INSERT INTO protocol_log (record) VALUES (%s::jsonb)",
                     (json.dumps(record, ensure_ascii=False, default=str),))

    def _log_alone(self, outcome: str, request_id: object, **fields: Any) -> None:
        with self.db.transaction() as conn:
            self._log(conn, self._now(conn), outcome, request_id, **fields)


def _notify(conn: Any, db: Database) -> None:
    conn.execute("SELECT pg_notify(%s, 'protocol')", (db.channel,))
