"""The roster on PostgreSQL: one row per member, with its host and a heartbeat.

Liveness across hosts is never a pid: the process that runs a member renews its heartbeat
(`heartbeat`, on the database clock, at the lease renewer's cadence) and a member whose
heartbeat is older than `stale_s` (45 s by default) is gone, with the reason
`no heartbeat for 45 s`. Members read from here are `PgMember`s: a Member that also carries
the age of its heartbeat at the time it was read. `PgOwnerLiveness` is the board's
`owner_gone` check built on it. Every change but a heartbeat notifies the team's channel (a
heartbeat changes nothing a waiter watches: like the lease renewal, it wakes nobody).
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import ValidationError

from ..errors import NotFound, Refused, StorageError, UserError
from ..names import check_name
from ..team.roster import (
    MAX_ROLE_CHARS,
    Member,
    RosterSnapshot,
    TeamConfig,
    this_host,
    thread_name,
)
from .db import Database

log = logging.getLogger(__name__)

STALE_S = 45.0
STALE_ENV = "AGENT_CLI_HEARTBEAT_STALE_S"


def stale_from_env(env: Mapping[str, str] | None = None) -> float:
    """How old a heartbeat may be before its member is gone: $AGENT_CLI_HEARTBEAT_STALE_S
    (seconds above 0; every process of a team should use the same) else 45. The heartbeat
    itself is written every third of it."""
    from ..board.leases import lease_seconds

    raw = (os.environ if env is None else env).get(STALE_ENV, "").strip()
    return lease_seconds(raw, STALE_ENV) if raw else STALE_S

_SELECT = ("SELECT name, data::text, EXTRACT(EPOCH FROM clock_timestamp() - heartbeat_at) "
           "FROM roster_member")


class PgMember(Member):
    """A Member as read from the database, with the age of its heartbeat (None: never)."""

    heartbeat_age_s: float | None = None


def _row_member(row: tuple) -> PgMember:
    name, data, age = row
    fields = json.loads(data)
    if not isinstance(fields, dict):
        raise ValueError("not an object")
    return PgMember.model_validate({**fields, "name": name,
                                    "heartbeat_age_s": None if age is None else float(age)})


def _dump(member: Member) -> str:
    return json.dumps(Member.model_validate(member.model_dump()).model_dump())


class PgRoster:
    """The members of team `team_name`, whose state lives in `db`'s schema."""

    def __init__(self, db: Database, team_name: str = "default", *,
                 stale_s: float = STALE_S) -> None:
        self.db = db
        self.team_name = check_name(team_name, "team name")
        self.stale_s = float(stale_s)
        self._host = this_host()

    # ---- reading ---------------------------------------------------------------------

    def stamp(self) -> tuple[int, int, str] | None:
        """Changes on every roster write by any process, heartbeats included (None: no
        member yet)."""
        [(count, joined, updated)] = self.db.execute(
            "SELECT count(*), coalesce(max(joined), 0), max(greatest(updated_at, "
            "coalesce(heartbeat_at, updated_at)))::text FROM roster_member")
        return None if not count else (int(count), int(joined), updated)

    def load(self) -> TeamConfig | None:
        """The team and its members in join order, None if it has none. A row that is not
        a member (written by hand) is left out with a warning."""
        members, problem = self._read()
        if problem:
            log.warning("%s", problem)
        return TeamConfig(team=self.team_name, members=members) if members else None

    def snapshot(self) -> RosterSnapshot:
        """Never raises: an unreachable server or a bad row is the snapshot's problem."""
        try:
            members, problem = self._read()
        except StorageError as exc:
            return RosterSnapshot(self.team_name, [], str(exc))
        return RosterSnapshot(self.team_name, members, problem)

    def _read(self) -> tuple[list[Member], str | None]:
        rows = self.db.execute(_SELECT + " ORDER BY joined")
        members: list[Member] = []
        bad: list[str] = []
        for row in rows:
            try:
                members.append(_row_member(row))
            except (ValidationError, ValueError):
                bad.append(repr(row[0]))
        if not bad:
            return members, None
        return members, (f"{self.db.schema}.roster_member: the rows of {', '.join(bad)} are "
                         "not members; left out until they are written again")

    def members(self) -> list[Member]:
        return self.snapshot().members

    def get(self, name: str) -> Member | None:
        check_name(name, "teammate name")
        rows = self.db.execute(_SELECT + " WHERE name = %s", (name,))
        if not rows:
            return None
        try:
            return _row_member(rows[0])
        except (ValidationError, ValueError):
            return None

    def is_alive(self, member: Member) -> bool:
        """Whether a process (on any host) runs `member` now: it records a host and its
        heartbeat is younger than `stale_s`, as read with the member. For this process's
        own entry, also only while its teammate thread runs here."""
        if member.host is None or self.gone_reason(member) is not None:
            return False
        age = getattr(member, "heartbeat_age_s", None)
        if age is None:
            return False
        if self._ours(member):
            return self._thread_runs(member.name)
        return True

    def gone_reason(self, member: Member) -> str | None:
        """'no heartbeat for 45 s' for a member recorded running (a host, not shut down)
        whose heartbeat is older than `stale_s`; None otherwise (this process's own
        members included while their threads run: they renew their heartbeats). A row with
        this host and pid but no such thread here (written by hand, or another container
        with the same host name and pid) is judged by its heartbeat like any other."""
        if member.host is None or member.status in ("shutdown", "failed"):
            return None
        if self._ours(member) and self._thread_runs(member.name):
            return None
        age = getattr(member, "heartbeat_age_s", None)
        if age is not None and age <= self.stale_s:
            return None
        return f"no heartbeat for {self.stale_s:g} s"

    # ---- writing ---------------------------------------------------------------------

    def add(self, name: str, role: str, model: str | None = None,
            require_plan: bool = False) -> Member:
        """Add `name`, or re-register it: status idle, no task, no idle reason."""
        return self._add(name, role, model, require_plan, running_here=False)

    def add_running(self, name: str, role: str, model: str | None = None,
                    require_plan: bool = False) -> Member:
        """add() for a teammate this process is about to run: its host and pid recorded,
        its heartbeat written. Refused (nothing written) while another process with a live
        heartbeat runs `name`, checked under the member's row lock."""
        return self._add(name, role, model, require_plan, running_here=True)

    def _add(self, name: str, role: str, model: str | None, require_plan: bool,
             running_here: bool) -> Member:
        check_name(name, "teammate name")
        if not isinstance(role, str) or not role.strip():
            raise UserError("a teammate needs a role (e.g. 'tester')")
        role = " ".join(role.split())
        if len(role) > MAX_ROLE_CHARS:
            raise UserError(f"role is too long ({len(role)} chars, at most {MAX_ROLE_CHARS})")
        with self.db.transaction() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))",
                         (f"{self.db.schema}.roster:{name}",))
            row = conn.execute(_SELECT + " WHERE name = %s FOR UPDATE", (name,)).fetchone()
            old = _safe_member(row)
            if running_here and old is not None and not self._ours(old) and \
                    old.heartbeat_age_s is not None and old.host is not None and \
                    old.heartbeat_age_s <= self.stale_s:
                raise Refused(f"{name} is already running in process {old.pid} on {old.host}")
            member = Member(
                name=name, role=role, model=model, status="idle", current_task=None,
                idle_reason="", updated_at=_now(conn), require_plan=bool(require_plan),
                tokens=old.tokens if old else 0, spend=old.spend if old else [],
                pid=os.getpid() if running_here else None,
                host=self._host if running_here else None)
            self._store(conn, member, beat=running_here)
        return self.get(name) or member

    def update(self, name: str, /, **fields: Any) -> Member:
        """Change some fields of `name` (and its updated_at). NotFound / UserError change
        nothing. Recording a host (a process taking the member over) writes its heartbeat."""
        check_name(name, "teammate name")
        allowed = set(Member.model_fields) - {"name", "updated_at"}
        unknown = sorted(set(fields) - allowed)
        if unknown:
            raise UserError(
                f"unknown member field {unknown[0]!r} (use: {', '.join(sorted(allowed))})")
        with self.db.transaction() as conn:
            row = conn.execute(_SELECT + " WHERE name = %s FOR UPDATE", (name,)).fetchone()
            old = _safe_member(row)
            if old is None:
                raise NotFound(f"no teammate {name!r} on team {self.team_name}")
            try:
                member = Member.model_validate(
                    {**old.model_dump(), **fields, "updated_at": _now(conn)})
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(p) for p in first["loc"])
                raise UserError(f"cannot update {name}: {where}: {first['msg']}") from None
            self._store(conn, member, beat=fields.get("host") is not None)
        return self.get(name) or member

    def heartbeat(self, names: Iterable[str]) -> list[str]:
        """Renew the heartbeats of those of `names` this process runs (its host and pid
        recorded); the names renewed. A member another process took over is left alone."""
        names = [check_name(n, "teammate name") for n in names]
        if not names:
            return []
        rows = self.db.execute(
            "UPDATE roster_member SET heartbeat_at = clock_timestamp() "
            "WHERE name = ANY(%s) AND host = %s AND pid = %s RETURNING name",
            (names, self._host, os.getpid()))
        return sorted(r[0] for r in rows)

    # ---- internals -------------------------------------------------------------------

    def _ours(self, member: Member) -> bool:
        return member.host == self._host and member.pid == os.getpid()

    @staticmethod
    def _thread_runs(name: str) -> bool:
        want = thread_name(name)
        return any(t.name == want and t.is_alive() for t in threading.enumerate())

    def _store(self, conn: Any, member: Member, *, beat: bool) -> None:
        conn.execute(
            "INSERT INTO roster_member (name, data, host, pid, heartbeat_at) "
            "VALUES (%(name)s, %(data)s::jsonb, %(host)s, %(pid)s, "
            "CASE WHEN %(beat)s THEN clock_timestamp() END) "
            "ON CONFLICT (name) DO UPDATE SET data = excluded.data, host = excluded.host, "
            "pid = excluded.pid, updated_at = now(), heartbeat_at = CASE WHEN %(beat)s "
            "THEN clock_timestamp() ELSE roster_member.heartbeat_at END",
            {"name": member.name, "data": _dump(member), "host": member.host,
             "pid": member.pid, "beat": beat})
        conn.execute("SELECT pg_notify(%s, %s)", (self.db.channel, f"roster:{member.name}"))


def _safe_member(row: tuple | None) -> PgMember | None:
    """The member of a row; a row that is not one reads as absent (then overwritten)."""
    if row is None:
        return None
    try:
        return _row_member(row)
    except (ValidationError, ValueError):
        return None


def _now(conn: Any) -> str:
    """The database clock as the roster's updated_at (UTC, milliseconds, Z)."""
    (text,) = conn.execute(
        "SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', "
        "'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')").fetchone()
    return text


class PgOwnerLiveness:
    """Callable: owners -> {owner: why it is gone} for members whose heartbeat is stale
    (the board's `owner_gone`, across hosts). An owner not on the roster proves nothing."""

    def __init__(self, roster: PgRoster) -> None:
        self._roster = roster

    def __call__(self, owners: Iterable[str]) -> dict[str, str]:
        owners = sorted({o for o in owners if isinstance(o, str)})
        if not owners:
            return {}
        rows = self._roster.db.execute(_SELECT + " WHERE name = ANY(%s)", (owners,))
        found = {}
        for row in rows:
            member = _safe_member(row)
            why = self._roster.gone_reason(member) if member is not None else None
            if why:
                found[member.name] = why
        return found

    def gone(self, owner: str) -> str | None:
        return self([owner]).get(owner)
