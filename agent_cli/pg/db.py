"""Database: one team's board on PostgreSQL, reached by URL, living in one schema.

psycopg 3, synchronous, autocommit connections with explicit transactions. Each thread gets
its own connection (a psycopg connection serializes its users; the board is used from many
threads at once), made on first use and remade when the server dropped it. `transaction()`
is the one way to change state: every statement inside commits together or not at all.
A LISTEN needs a connection of its own: `listen_connection()`.

The URL's password never reaches a message: `mask_url` names the board, `scrub` cleans
what libpq or the server says about it (storeset.py).
"""

from __future__ import annotations

import re
import select
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import sql

from ..errors import StorageError, UserError
from ..storeset import mask_url, scrub

SCHEMES = ("postgresql", "postgres")
_SCHEMA_RE = re.compile(r"[a-z_][a-z0-9_]{0,62}")


def check_url(url: str) -> str:
    """A postgresql:// URL, or a one-line UserError (password masked)."""
    scheme = url.split("://", 1)[0].lower() if "://" in url else ""
    if scheme not in SCHEMES:  # not a URL: where a password would sit is unknown
        shown = mask_url(url) if "://" in url else "the value (not shown)"
        raise UserError(f"not a PostgreSQL URL: {shown} "
                        "(expected postgresql://user@host/database)")
    return url


def schema_for_team(team: str) -> str:
    """The schema a team lives in: `agent_cli_<team>` (team names are slugs already)."""
    name = "agent_cli_" + team.lower().replace("-", "_")
    if not _SCHEMA_RE.fullmatch(name):
        raise UserError(f"team name {team!r} cannot name a PostgreSQL schema "
                        "(letters, digits, - and _, up to 52 characters)")
    return name


def storage_error(db: Database, exc: BaseException) -> StorageError:
    """A psycopg failure as one line naming the board (never its password)."""
    detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return StorageError(f"PostgreSQL board {mask_url(db.url)} ({db.schema}): "
                        f"{scrub(detail, db.url)}")


def _hung_up(conn: psycopg.Connection) -> bool:
    """Whether the server ended this idle connection. An idle connection's socket has
    nothing to read unless the server said goodbye (a FATAL, then end of file): one
    non-blocking select, and a probe only in that case."""
    try:
        if not select.select([conn.fileno()], [], [], 0)[0]:
            return False
        conn.execute("SELECT 1")
    except (psycopg.Error, OSError, ValueError):
        return True
    return False


class Database:
    """A team's schema in one PostgreSQL database. Thread-safe; `close()` ends every
    connection it made. Picklable as (url, schema): a child process opens its own."""

    def __init__(self, url: str, schema: str, *, connect_timeout_s: int = 10,
                 statement_timeout_ms: int = 30_000) -> None:
        self.url = check_url(url)
        if not _SCHEMA_RE.fullmatch(schema):
            raise UserError(f"bad schema name {schema!r}")
        self.schema = schema
        self.connect_timeout_s = connect_timeout_s
        self.statement_timeout_ms = statement_timeout_ms
        self._local = threading.local()
        self._all: list[psycopg.Connection] = []
        self._lock = threading.Lock()

    def __reduce__(self):
        return (Database, (self.url, self.schema),
                {"connect_timeout_s": self.connect_timeout_s,
                 "statement_timeout_ms": self.statement_timeout_ms})

    def __setstate__(self, state: dict) -> None:
        self.connect_timeout_s = state["connect_timeout_s"]
        self.statement_timeout_ms = state["statement_timeout_ms"]

    @property
    def channel(self) -> str:
        """The NOTIFY channel of this team's changes (channels are database-wide)."""
        return self.schema

    def connect(self) -> psycopg.Connection:
        """A new autocommit connection with this schema first on the search path."""
        try:
            conn = psycopg.connect(
                self.url, autocommit=True, connect_timeout=self.connect_timeout_s,
                options=f"-c search_path={self.schema} "
                        f"-c statement_timeout={self.statement_timeout_ms}")
        except psycopg.Error as exc:
            raise storage_error(self, exc) from None
        with self._lock:  # connections the server dropped are forgotten here
            self._all = [c for c in self._all if not c.closed]
            self._all.append(conn)
        return conn

    def conn(self) -> psycopg.Connection:
        """This thread's connection (made, or remade after the server dropped it: a restart
        or pg_terminate_backend while it sat idle is seen here, before any statement)."""
        conn = getattr(self._local, "conn", None)
        if conn is None or conn.closed or conn.broken or _hung_up(conn):
            if conn is not None:
                self._forget(conn)
            conn = self._local.conn = self.connect()
        return conn

    @contextmanager
    def transaction(self) -> Iterator[psycopg.Connection]:
        """One transaction on this thread's connection; a psycopg failure becomes a
        StorageError (the transaction rolled back: nothing half-written)."""
        conn = self.conn()
        try:
            with conn.transaction():
                yield conn
        except psycopg.Error as exc:
            raise storage_error(self, exc) from None

    def execute(self, query: Any, params: Any = None) -> list[tuple]:
        """One statement in its own transaction; its rows (empty for none)."""
        with self.transaction() as conn:
            cur = conn.execute(query, params)
            return cur.fetchall() if cur.description else []

    def listen_connection(self) -> psycopg.Connection:
        """A connection of its own, LISTENing on `channel`."""
        conn = self.connect()
        try:
            conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self.channel)))
        except psycopg.Error as exc:
            raise storage_error(self, exc) from None
        return conn

    def _forget(self, conn: psycopg.Connection) -> None:
        with self._lock:
            if conn in self._all:
                self._all.remove(conn)
        try:
            conn.close()
        except psycopg.Error:
            pass

    def close(self) -> None:
        """End every connection made so far. A later use connects again (a report written
        after the session closed its stores still reads the board)."""
        with self._lock:
            conns, self._all = self._all, []
        for conn in conns:
            try:
                conn.close()
            except psycopg.Error:
                pass
