"""The team's schema and its migrations, one list per component (board, team, ...).

Each component (a `Component`: name + ordered migrations) owns its tables; `ensure_schema`
creates the team's schema if missing and applies every migration not yet recorded in
`schema_version`, all in one transaction under an advisory lock, so two processes starting at
once apply each migration once. A schema that exists is used as it is (its owner needs no
CREATE on the database). A schema written by a newer agent-cli (a version this one does
not know) is refused with a one-line error: nothing is changed.
"""

from __future__ import annotations

from dataclasses import dataclass

from psycopg import sql

from ..errors import StorageError
from .db import Database, mask_url


@dataclass(frozen=True)
class Component:
    """A part of the schema: `migrations[i]` is version i + 1 (SQL run in order)."""

    name: str
    migrations: tuple[str, ...]

    @property
    def version(self) -> int:
        return len(self.migrations)


VERSION_TABLE = """
CREATE TABLE IF NOT EXISTS schema_version (
    component text NOT NULL,
    version integer NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (component, version)
)"""


def versions(db: Database) -> dict[str, int]:
    """The version of each component recorded in the team's schema ({} if none)."""
    rows = db.execute(
        "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = %s AND c.relname = 'schema_version'", (db.schema,))
    if not rows:
        return {}
    return dict(db.execute("SELECT component, max(version) FROM schema_version "
                           "GROUP BY component"))


def ensure_schema(db: Database, components: list[Component]) -> None:
    """Create the schema and apply what is missing of each component; refuse a newer one."""
    with db.transaction() as conn:
        conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (db.schema,))
        # CREATE SCHEMA IF NOT EXISTS needs CREATE on the database even when the schema
        # exists: a role given only a schema of its own must never have to run it
        if not conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s",
                            (db.schema,)).fetchone():
            conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(db.schema)))
        conn.execute(VERSION_TABLE)
        have = dict(conn.execute("SELECT component, max(version) FROM schema_version "
                                 "GROUP BY component").fetchall())
        for comp in components:
            current = have.get(comp.name, 0)
            if current > comp.version:
                raise StorageError(
                    f"PostgreSQL board {mask_url(db.url)} ({db.schema}): its {comp.name} "
                    f"schema is version {current}, this agent-cli knows up to "
                    f"{comp.version}: upgrade agent-cli")
            for number in range(current + 1, comp.version + 1):
                conn.execute(comp.migrations[number - 1])
                conn.execute("INSERT INTO schema_version (component, version) "
                             "VALUES (%s, %s)", (comp.name, number))
