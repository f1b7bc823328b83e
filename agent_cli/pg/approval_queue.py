"""The approval queue's tables and statements: a teammate's question to the lead, across hosts.

`approval_request`: one row per question (who, which host, the tool, what it shows, the
input as JSONB), its state `waiting -> claimed -> answered`, or `withdrawn` when the asker
gave up (cancelled, or its heartbeat went stale: its process died). `approval_lead`: the
leads whose approval bridge is attached to a human, each with a heartbeat. Every time on
these rows is the database's clock. Every change that someone waits for is followed by a
NOTIFY on `channel(db)` in the same transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from psycopg import sql
from psycopg.types.json import Jsonb

from ..permissions.broker import ApprovalAnswer, ApprovalRequest
from ..safetext import visible
from .db import Database
from .schema import Component

APPROVALS = Component("approvals", ("""
CREATE TABLE approval_request (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    key text NOT NULL UNIQUE,
    agent text NOT NULL,
    host text NOT NULL,
    tool text NOT NULL,
    summary text NOT NULL DEFAULT '',
    preview text NOT NULL DEFAULT '',
    purpose text NOT NULL DEFAULT '',
    suggested_rule text NOT NULL DEFAULT '',
    reason text NOT NULL DEFAULT '',
    input jsonb NOT NULL DEFAULT '{}',
    state text NOT NULL DEFAULT 'waiting'
        CHECK (state IN ('waiting', 'claimed', 'answered', 'withdrawn')),
    asked_at timestamptz NOT NULL DEFAULT now(),
    asker_seen_at timestamptz NOT NULL DEFAULT now(),
    claimed_by text,
    claimed_at timestamptz,
    decision text CHECK (decision IN ('allow_once', 'allow_always', 'deny')),
    feedback text NOT NULL DEFAULT '',
    source text NOT NULL DEFAULT '',
    why_withdrawn text NOT NULL DEFAULT '',
    finished_at timestamptz,
    CHECK ((state = 'answered') = (decision IS NOT NULL)),
    CHECK (state <> 'claimed' OR claimed_by IS NOT NULL)
);
CREATE INDEX approval_request_open ON approval_request (id)
    WHERE state IN ('waiting', 'claimed');
CREATE TABLE approval_lead (
    lead text PRIMARY KEY,
    host text NOT NULL,
    seen_at timestamptz NOT NULL DEFAULT now()
);
""",))

VERBS = {"shell": "run", "write_file": "write", "edit_file": "edit"}
KEEP_DAYS = 7  # answered and withdrawn rows are kept this long (what was asked, who answered)
_FIELDS = ("key", "agent", "host", "tool", "summary", "preview", "purpose", "suggested_rule",
           "reason", "input")


def channel(db: Database) -> str:
    """The NOTIFY channel of the team's approvals (at most 63 bytes, as PostgreSQL wants)."""
    return db.schema[:53] + "_approvals"


def what(req: ApprovalRequest) -> str:
    """"run `npm test`": the request in a few words, safe for a terminal."""
    verb = VERBS.get(req.tool) or f"use {visible(req.tool, one_line=True)} on"
    target = visible(req.summary or req.tool, one_line=True)
    if len(target) > 120:
        target = target[:117] + "..."
    return f"{verb} `{target}`"


def unsendable(req: ApprovalRequest) -> str:
    """Why `req` cannot travel in a row ("" when it can): PostgreSQL text holds no NUL."""
    texts = (req.agent, req.tool, req.summary, req.preview, req.purpose, req.suggested_rule,
             req.reason)
    if any("\x00" in t for t in texts) or _has_nul(req.input):
        return "it contains a NUL character, which cannot be sent to the lead"
    return ""


def _has_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_has_nul(k) or _has_nul(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return any(_has_nul(v) for v in value)
    return False


@dataclass(frozen=True)
class Seen:
    """What the asker reads at each heartbeat."""

    state: str
    answer: ApprovalAnswer | None
    lead_present: bool


@dataclass(frozen=True)
class Claimed:
    """A request a lead took, as the row says (not yet checked: it came from another host)."""

    key: str
    agent: str
    host: str
    tool: str
    summary: str
    preview: str
    purpose: str
    suggested_rule: str
    reason: str
    input: Any


class ApprovalQueue:
    """The statements both sides run; each is one transaction (StorageError on failure)."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.channel = channel(db)

    def _notify(self, conn: Any, what: str) -> None:
        conn.execute("SELECT pg_notify(%s, %s)", (self.channel, what))

    # ----- the asker -----------------------------------------------------------------------
    def insert(self, key: str, host: str, req: ApprovalRequest) -> None:
        """Put the question in the queue (again: a no-op when a lost reply hid the insert)."""
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO approval_request (key, agent, host, tool, summary, preview, "
                "purpose, suggested_rule, reason, input) VALUES "
                "(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (key) DO NOTHING",
                (key, req.agent, host, req.tool, req.summary, req.preview, req.purpose,
                 req.suggested_rule, req.reason, Jsonb(req.input)))
            self._notify(conn, "request")

    def touch(self, key: str, fresh_s: float, beat: bool = True) -> Seen | None:
        """The asker's look at its row: state, answer, whether a lead is attached; with
        `beat`, also its heartbeat (an UPDATE: the row is locked for that moment, so a
        wake-up only reads). None when the row is missing."""
        lead = ("EXISTS (SELECT 1 FROM approval_lead WHERE seen_at > now() - "
                "make_interval(secs => %s))")
        rows = self.db.execute(
            "UPDATE approval_request SET asker_seen_at = now() WHERE key = %s "
            f"RETURNING state, decision, feedback, source, {lead}" if beat else
            f"SELECT state, decision, feedback, source, {lead} FROM approval_request "
            "WHERE key = %s", (key, fresh_s) if beat else (fresh_s, key))
        if not rows:
            return None
        state, decision, feedback, source, present = rows[0]
        answer = None
        if state == "answered":  # `save` stays with the lead: its settings got the rule
            answer = ApprovalAnswer(decision, feedback=feedback, source=source or "human")
        return Seen(state, answer, bool(present))

    def revive(self, key: str) -> None:
        """The asker is alive after all (it was cut off): its question waits again."""
        with self.db.transaction() as conn:
            cur = conn.execute(
                "UPDATE approval_request SET state = 'waiting', claimed_by = NULL, "
                "claimed_at = NULL, why_withdrawn = '', finished_at = NULL, "
                "asker_seen_at = now() WHERE key = %s AND state = 'withdrawn'", (key,))
            if cur.rowcount:
                self._notify(conn, "request")

    def withdraw(self, key: str, why: str) -> bool:
        """The asker gives up; False if the row was no longer open."""
        with self.db.transaction() as conn:
            cur = conn.execute(
                "UPDATE approval_request SET state = 'withdrawn', why_withdrawn = %s, "
                "finished_at = now() WHERE key = %s AND state IN ('waiting', 'claimed')",
                (why, key))
            if cur.rowcount:
                self._notify(conn, "withdrawn")
            return bool(cur.rowcount)

    def lead_present(self, fresh_s: float) -> bool:
        rows = self.db.execute(
            "SELECT EXISTS (SELECT 1 FROM approval_lead WHERE seen_at > now() - "
            "make_interval(secs => %s))", (fresh_s,))
        return bool(rows[0][0])

    # ----- the lead ------------------------------------------------------------------------
    def present(self, lead: str, host: str) -> None:
        """The lead's heartbeat: a human is attached behind this bridge."""
        self.db.execute(
            "INSERT INTO approval_lead (lead, host) VALUES (%s, %s) ON CONFLICT (lead) "
            "DO UPDATE SET seen_at = now(), host = EXCLUDED.host", (lead, host))

    def absent(self, lead: str) -> None:
        self.db.execute("DELETE FROM approval_lead WHERE lead = %s", (lead,))

    def sweep(self, stale_s: float) -> None:
        """Withdraw what a silent asker left; free what a silent lead claimed; forget rows
        finished long ago."""
        with self.db.transaction() as conn:
            gone = conn.execute(
                "UPDATE approval_request SET state = 'withdrawn', finished_at = now(), "
                "why_withdrawn = 'the asker stopped answering (its process ended?)' "
                "WHERE state IN ('waiting', 'claimed') "
                "AND asker_seen_at < now() - make_interval(secs => %s)", (stale_s,)).rowcount
            freed = conn.execute(
                "UPDATE approval_request r SET state = 'waiting', claimed_by = NULL, "
                "claimed_at = NULL WHERE state = 'claimed' AND NOT EXISTS (SELECT 1 FROM "
                "approval_lead l WHERE l.lead = r.claimed_by AND l.seen_at > now() - "
                "make_interval(secs => %s))", (stale_s,)).rowcount
            conn.execute("DELETE FROM approval_lead WHERE seen_at < now() - interval '1 day'")
            conn.execute("DELETE FROM approval_request WHERE finished_at < now() - "
                         "make_interval(days => %s)", (KEEP_DAYS,))
            if gone or freed:
                self._notify(conn, "sweep")

    def claim_next(self, lead: str, fresh_s: float) -> Claimed | None:
        """The oldest waiting request of a live asker, now claimed by `lead` (exactly one
        lead gets each: the row is locked and skipped by the others)."""
        cols = sql.SQL(", ").join(sql.Identifier("r", f) for f in _FIELDS)
        rows = self.db.execute(sql.SQL(
            "UPDATE approval_request r SET state = 'claimed', claimed_by = %s, "
            "claimed_at = now() WHERE r.id = (SELECT id FROM approval_request "
            "WHERE state = 'waiting' AND asker_seen_at > now() - make_interval(secs => %s) "
            "ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) AND r.state = 'waiting' "
            "RETURNING {}").format(cols), (lead, fresh_s))
        return Claimed(*rows[0]) if rows else None

    def has_waiting(self, fresh_s: float) -> bool:
        """Whether a live asker's request waits (locked or not)."""
        rows = self.db.execute(
            "SELECT EXISTS (SELECT 1 FROM approval_request WHERE state = 'waiting' "
            "AND asker_seen_at > now() - make_interval(secs => %s))", (fresh_s,))
        return bool(rows[0][0])

    def reclaim(self, key: str, lead: str) -> bool:
        """Take back a request this lead still shows, freed while its heartbeat was late."""
        rows = self.db.execute(
            "UPDATE approval_request SET state = 'claimed', claimed_by = %s, "
            "claimed_at = now() WHERE key = %s AND state = 'waiting' RETURNING id",
            (lead, key))
        return bool(rows)

    def states(self, keys: list[str]) -> dict[str, tuple[str, str | None]]:
        """key -> (state, claimed_by) for the rows that exist."""
        rows = self.db.execute("SELECT key, state, claimed_by FROM approval_request "
                               "WHERE key = ANY(%s)", (keys,))
        return {k: (s, by) for k, s, by in rows}

    def answer(self, key: str, lead: str, answer: ApprovalAnswer) -> bool:
        """Write the human's answer, once: False when the request is not this lead's to
        answer any more (withdrawn, or claimed again by another lead)."""
        with self.db.transaction() as conn:
            cur = conn.execute(
                "UPDATE approval_request SET state = 'answered', decision = %s, feedback = %s,"
                " source = %s, finished_at = now() WHERE key = %s AND state = 'claimed' "
                "AND claimed_by = %s", (answer.decision, answer.feedback, answer.source,
                                        key, lead))
            if cur.rowcount:
                self._notify(conn, "answer")
                return True
            # A retry after a reply the connection lost: the first attempt did write it.
            row = conn.execute("SELECT state, claimed_by FROM approval_request WHERE key = %s",
                               (key,)).fetchone()
            return row == ("answered", lead)

    def release(self, key: str | None, lead: str) -> None:
        """Give back (one, or every) claim of this lead: another lead may answer it."""
        with self.db.transaction() as conn:
            cur = conn.execute(
                "UPDATE approval_request SET state = 'waiting', claimed_by = NULL, "
                "claimed_at = NULL WHERE claimed_by = %s AND state = 'claimed' "
                "AND (%s::text IS NULL OR key = %s)", (lead, key, key))
            if cur.rowcount:
                self._notify(conn, "request")
