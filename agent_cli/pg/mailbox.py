"""Inboxes on PostgreSQL: the file Mailbox's semantics, one table row per message.

A send takes the next number of the recipient's inbox (`inbox_head`, row-locked until the
commit, so numbers are committed in order and a reader past number n never misses one below
it) and stores the message under it, in one statement; a message id is stored once (a resend
of the same id is dropped; two resends racing may leave a number unused, which no reader
minds). A reader `fetch`es the messages past its acknowledged cursor (a message number) and
`ack`s the number it has taken in: a crash in between redelivers rather than loses. Ids marked
delivered (`mark_delivered`, the consumer's durable record) are dropped from a redelivery. A
row that is not a message for its inbox (written by hand) is quarantined once and skipped.
Every change notifies the team's channel in its transaction.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable
from typing import Any

import psycopg
from pydantic import ValidationError

from ..errors import Refused, UserError
from ..fsutil import utc_now
from ..names import check_name
from ..team.mailbox import Delivery, MailMessage, build_message
from .db import Database, storage_error

log = logging.getLogger(__name__)

FETCH_CAP = 1000  # messages per fetch; the rest come with the next one

_APPEND = """
WITH head AS (
    INSERT INTO inbox_head AS h (inbox, last_seq)
    SELECT %(to)s, 1 WHERE NOT EXISTS (SELECT 1 FROM inbox_message WHERE id = %(id)s)
    ON CONFLICT (inbox) DO UPDATE SET last_seq = h.last_seq + 1
    RETURNING last_seq),
msg AS (
    INSERT INTO inbox_message (inbox, seq, id, body)
    SELECT %(to)s, last_seq, %(id)s, %(body)s::jsonb FROM head
    ON CONFLICT (id) DO NOTHING RETURNING seq)
SELECT seq, pg_notify(%(channel)s, %(what)s) FROM msg"""

_UNREAD = """
SELECT count(*) FROM inbox_message m
WHERE m.inbox = %(inbox)s
  AND m.seq > coalesce((SELECT seq FROM inbox_cursor WHERE inbox = %(inbox)s), 0)
  AND NOT EXISTS (SELECT 1 FROM inbox_delivered d WHERE d.inbox = m.inbox AND d.id = m.id)"""

_UNREAD_STAMP = """
SELECT coalesce((SELECT last_seq FROM inbox_head WHERE inbox = %(inbox)s), 0),
       coalesce((SELECT seq FROM inbox_cursor WHERE inbox = %(inbox)s), 0)"""

# the cursor, then each message past it with whether its id was marked delivered
_FETCH = """
SELECT c.start, m.seq, m.body::text, d.id IS NOT NULL
FROM (SELECT coalesce((SELECT seq FROM inbox_cursor WHERE inbox = %(inbox)s), 0) AS start) c
LEFT JOIN LATERAL (
    SELECT seq, body, id FROM inbox_message
    WHERE inbox = %(inbox)s AND seq > c.start ORDER BY seq LIMIT %(cap)s) m ON true
LEFT JOIN inbox_delivered d ON d.inbox = %(inbox)s AND d.id = m.id
ORDER BY m.seq"""


class PgMailbox:
    """The team's inboxes in `db`. `on_change` is called after every in-process send."""

    def __init__(self, db: Database, *, on_change: Callable[[], None] | None = None) -> None:
        self.db = db
        self._on_change = on_change

    # ---- writing ---------------------------------------------------------------------

    def send(
        self,
        sender: str,
        to: str,
        content: str,
        type: str = "message",
        *,
        request_id: str | None = None,
        approve: bool | None = None,
        plan: str | None = None,
    ) -> MailMessage:
        """Store one message in `to`'s inbox and return it (with its new id)."""
        msg = build_message(sender, to, content, type, request_id, approve, plan)
        self.append(msg)
        if self._on_change is not None:
            self._on_change()
        return msg

    def append(self, msg: MailMessage) -> bool:
        """Store `msg` as it is (its id and time kept: a migration, a resend); False when
        its id is already stored (nothing written). One statement, one round trip: the
        inbox's row stays locked until its commit, so numbers commit in order."""
        to = check_name(msg.to, "recipient name")
        odd = _unstorable(msg.model_dump())
        if odd:
            raise Refused(f"message to {to} not sent: it has {odd}, which the PostgreSQL "
                          "board cannot store")
        rows = _statement(self.db, _APPEND, {
            "to": to, "id": msg.id, "body": msg.to_line(), "channel": self.db.channel,
            "what": f"inbox:{to}"})
        return bool(rows)

    def broadcast(self, sender: str, content: str, recipients: list[str]) -> list[MailMessage]:
        """Send `content` as type broadcast to every recipient but the sender (each once).
        Every name is checked before anything is written, so a bad name sends nothing."""
        check_name(sender, "sender name")
        targets: list[str] = []
        for name in recipients:
            check_name(name, "recipient name")
            if name != sender and name not in targets:
                targets.append(name)
        return [self.send(sender, name, content, "broadcast") for name in targets]

    # ---- reading ---------------------------------------------------------------------

    def fetch(self, name: str) -> Delivery:
        """Unread messages past the acknowledged cursor (at most FETCH_CAP). Consumes
        nothing; ids marked delivered are left out (the cursor still passes them)."""
        check_name(name, "inbox name")
        found = _statement(self.db, _FETCH, {"inbox": name, "cap": FETCH_CAP})
        start = int(found[0][0])
        rows = [r[1:] for r in found if r[1] is not None]
        messages: list[MailMessage] = []
        bad: list[tuple[int, str, str]] = []
        for seq, body, delivered in rows:
            try:
                msg = _parse(body, name)
            except ValueError as exc:
                bad.append((seq, body, str(exc)))
                continue
            if not delivered:
                messages.append(msg)
        end = rows[-1][0] if rows else start
        problems = self._quarantine(name, bad) if bad else []
        for problem in problems:
            log.warning("%s", problem)
        return Delivery(messages, end, problems)

    def peek(self, name: str) -> list[MailMessage]:
        """The unread messages, without acknowledging anything."""
        return self.fetch(name).messages

    def ack(self, name: str, cursor: int) -> None:
        """Record that every message up to number `cursor` was taken in. Never moves
        backwards; a cursor past the inbox's last message is refused."""
        if isinstance(cursor, bool) or not isinstance(cursor, int) or cursor < 0:
            raise UserError(f"invalid cursor {cursor!r}: use the cursor fetch returned")
        check_name(name, "inbox name")
        with self.db.transaction() as conn:
            head = _head(conn, name)
            if cursor > head:
                raise UserError(f"cursor {cursor} is past the end of {name}'s inbox "
                                f"({head} messages)")
            changed = conn.execute(
                "INSERT INTO inbox_cursor (inbox, seq) VALUES (%s, %s) ON CONFLICT (inbox) "
                "DO UPDATE SET seq = excluded.seq, updated_at = now() "
                "WHERE inbox_cursor.seq < excluded.seq", (name, cursor)).rowcount
            if changed:
                _notify(conn, self.db, f"cursor:{name}")

    def unread(self, name: str) -> int:
        """How many messages wait past the cursor, not marked delivered (a count for the
        watch and the toolbar; the file watch counts lines past the cursor file)."""
        check_name(name, "inbox name")
        rows = _statement(self.db, _UNREAD, {"inbox": name})
        return int(rows[0][0])

    def unread_count(self, name: str) -> int:
        """What waits for `name` (the store interface's name for `unread`)."""
        return self.unread(name)

    def unread_stamp(self, name: str) -> tuple[int, int]:
        """Changes when a message arrives in `name`'s inbox or its cursor moves."""
        check_name(name, "inbox name")
        rows = _statement(self.db, _UNREAD_STAMP, {"inbox": name})
        return (int(rows[0][0]), int(rows[0][1]))

    def mark_delivered(self, name: str, ids: Iterable[str]) -> None:
        """Record that these messages of `name`'s inbox were taken in (by id): a later
        redelivery of any of them is dropped, in this process or any other."""
        check_name(name, "inbox name")
        ids = [i for i in ids if isinstance(i, str)]
        if not ids:
            return
        with self.db.transaction() as conn:
            conn.execute("INSERT INTO inbox_delivered (inbox, id) SELECT %s, unnest(%s::text[]) "
                         "ON CONFLICT DO NOTHING", (name, ids))

    def delivered(self, name: str) -> set[str]:
        """The ids marked delivered in `name`'s inbox."""
        check_name(name, "inbox name")
        rows = self.db.execute("SELECT id FROM inbox_delivered WHERE inbox = %s", (name,))
        return {r[0] for r in rows}

    def cursor(self, name: str) -> int:
        """The acknowledged message number of `name`'s inbox (0 if never acknowledged)."""
        check_name(name, "inbox name")
        rows = _statement(self.db, "SELECT seq FROM inbox_cursor WHERE inbox = %s", (name,))
        return int(rows[0][0]) if rows else 0

    def stamp(self, name: str) -> tuple[int, int]:
        """(number of the last message, 0), (0, 0) for an empty inbox: changes on every
        send."""
        check_name(name, "inbox name")
        rows = _statement(self.db, "SELECT last_seq FROM inbox_head WHERE inbox = %s",
                          (name,))
        return (int(rows[0][0]) if rows else 0, 0)

    def quarantined(self, name: str) -> list[dict]:
        """The quarantine records of `name`'s inbox (inbox, seq, raw row, error, ts)."""
        check_name(name, "inbox name")
        rows = self.db.execute("SELECT record FROM inbox_quarantine WHERE inbox = %s "
                               "ORDER BY seq", (name,))
        return [r[0] for r in rows]

    # ---- internals -------------------------------------------------------------------

    def _quarantine(self, name: str, bad: list[tuple[int, str, str]]) -> list[str]:
        """Record each bad row once; a warning for each one recorded now."""
        warnings = []
        with self.db.transaction() as conn:
            for seq, raw, error in bad:
                record = {"inbox": name, "seq": seq, "line": raw[:1000], "error": error,
                          "ts": utc_now()}
                added = conn.execute(
                    "INSERT INTO inbox_quarantine (inbox, seq, record) VALUES (%s, %s, %s) "
                    "ON CONFLICT DO NOTHING", (name, seq, json.dumps(record))).rowcount
                if added:
                    warnings.append(f"{self.db.schema} inbox {name}: malformed message "
                                    f"number {seq} ({error}); quarantined")
        return warnings


def _parse(body: str, inbox: str) -> MailMessage:
    try:
        data: Any = json.loads(body)
        msg = MailMessage.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "message"
        raise ValueError(f"not a message ({where}: {first['msg']})") from None
    except ValueError as exc:
        raise ValueError(f"not JSON ({exc})") from None
    if msg.to != inbox:
        raise ValueError(f"addressed to {msg.to!r}, found in {inbox!r}'s inbox")
    return msg


def _unstorable(value: Any) -> str | None:
    """What in a message's texts jsonb cannot hold (a NUL, a lone surrogate: a model's JSON
    can carry either), or None."""
    if isinstance(value, str):
        if "\x00" in value:
            return "a NUL character (U+0000)"
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return "a lone surrogate (not UTF-8)"
        return None
    items = value.items() if isinstance(value, dict) else \
        enumerate(value) if isinstance(value, (list, tuple)) else ()
    for key, item in items:
        found = _unstorable(key) or _unstorable(item)
        if found:
            return found
    return None


def _head(conn: Any, name: str) -> int:
    row = conn.execute("SELECT last_seq FROM inbox_head WHERE inbox = %s", (name,)).fetchone()
    return int(row[0]) if row else 0


def _statement(db: Database, query: str, params: Any) -> list[tuple]:
    """One statement on this thread's autocommit connection (its own transaction, one
    round trip): its rows."""
    try:
        cur = db.conn().execute(query, params)
        return cur.fetchall() if cur.description else []
    except psycopg.Error as exc:
        raise storage_error(db, exc) from None


def _notify(conn: Any, db: Database, what: str) -> None:
    conn.execute("SELECT pg_notify(%s, %s)", (db.channel, what))
