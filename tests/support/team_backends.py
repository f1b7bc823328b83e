"""The team's stores on either backend, for the contract tests: `team_backend` is
parametrized "files" / "postgresql" and builds the mailbox, roster and protocol store of one
team, on files in the test's workdir or in the test's own PostgreSQL schema.

A racer process opens the same stores from `backend.spec` with the `OPEN` snippet
(`stores(spec)` -> (mailbox, roster, protocols)), whichever the backend.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

BACKENDS = ("files", "postgresql")

# Prepended to a racer's `python -c` script: stores(spec, team="demo") for either backend.
OPEN = '''
def stores(spec, team="demo"):
    kind, _, where = spec.partition(":")
    if kind == "files":
        from pathlib import Path
        from agent_cli.team.mailbox import Mailbox
        from agent_cli.team.protocol import ProtocolStore
        from agent_cli.team.roster import Roster
        return Mailbox(Path(where)), Roster(Path(where), team), ProtocolStore(Path(where))
    from agent_cli.pg.db import Database
    from agent_cli.pg.mailbox import PgMailbox
    from agent_cli.pg.protocol import PgProtocolStore
    from agent_cli.pg.roster import PgRoster
    url, _, schema = where.rpartition("#")
    db = Database(url, schema)
    return PgMailbox(db), PgRoster(db, team), PgProtocolStore(db)
'''


@dataclass
class TeamBackend:
    """One team's stores on one backend (`name`); `db` is None for files."""

    name: str
    team_dir: Path
    db: Any = None

    @property
    def spec(self) -> str:
        """What a racer process passes to OPEN's `stores`."""
        if self.db is None:
            return f"files:{self.team_dir}"
        return f"postgresql:{self.db.url}#{self.db.schema}"

    def mailbox(self, on_change: Callable[[], None] | None = None):
        if self.db is None:
            from agent_cli.team.mailbox import Mailbox

            return Mailbox(self.team_dir, on_change=on_change)
        from agent_cli.pg.mailbox import PgMailbox

        return PgMailbox(self.db, on_change=on_change)

    def roster(self, team_name: str = "demo"):
        if self.db is None:
            from agent_cli.team.roster import Roster

            return Roster(self.team_dir, team_name=team_name)
        from agent_cli.pg.roster import PgRoster

        return PgRoster(self.db, team_name)

    def protocols(self, clock: Callable[[], datetime] | None = None):
        if self.db is None:
            from agent_cli.team.protocol import ProtocolStore

            return ProtocolStore(self.team_dir, clock=clock)
        from agent_cli.pg.protocol import PgProtocolStore

        return PgProtocolStore(self.db, clock=clock)

    def protocol_log(self, store) -> list[dict]:
        """The store's decision log, oldest first."""
        if self.db is None:
            import json

            if not store.log_path.exists():
                return []
            return [json.loads(line) for line in store.log_path.read_text().splitlines()]
        return store.log()


@pytest.fixture(params=BACKENDS)
def team_backend(request: pytest.FixtureRequest, workdir: Path) -> TeamBackend:
    """The team's stores, once on files and once on PostgreSQL (its own schema)."""
    if request.param == "files":
        return TeamBackend("files", workdir / ".team")
    from agent_cli.pg.schema import ensure_schema
    from agent_cli.pg.team_schema import TEAM

    db = request.getfixturevalue("pg_db")
    ensure_schema(db, [TEAM])
    return TeamBackend("postgresql", workdir / ".team", db)


class Clock:
    """A settable UTC clock for the protocol stores, so expiry is reached without waiting."""

    def __init__(self) -> None:
        self.now = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()
