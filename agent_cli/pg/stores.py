"""open_pg_stores: a team's four stores on PostgreSQL, as the factory (stores.py) asks.

One Database (per-thread connections) is shared by the board, mailbox, roster and protocol
store; the team's schema is created or migrated once, here, before any of them is used (a
server that cannot be reached, or a schema from a newer agent-cli, is one line and nothing
starts). Idle waiters are woken by one LISTEN connection per process (listen.Listener) fed
into the same change signal the file watcher feeds. A board owner is gone when its
heartbeat is stale (PgOwnerLiveness), never by pid.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..events import TaskEvent
from ..storeset import BoardLocation, StoreSet
from .approvals import APPROVALS
from .board import PgTaskBoard
from .board_schema import BOARD
from .db import Database, schema_for_team
from .identity import IDENTITY, claim_schema
from .listen import Listener
from .mailbox import PgMailbox
from .protocol import PgProtocolStore
from .roster import PgOwnerLiveness, PgRoster, stale_from_env
from .schema import ensure_schema
from .team_schema import TEAM

COMPONENTS = [BOARD, TEAM, APPROVALS, IDENTITY]


def open_database(url: str, team: str) -> Database:
    """The team's schema in the database at `url`, created or migrated to this version; a
    UserError when another team (a name mapping to the same schema) owns it."""
    db = Database(url, schema_for_team(team))
    try:
        ensure_schema(db, COMPONENTS)
        claim_schema(db, team)
    except BaseException:
        db.close()
        raise
    return db


def open_pg_stores(url: str, team: str, *, workdir: Path | None = None,
                   on_change: Callable[[], None] | None = None,
                   on_event: Callable[[TaskEvent], None] | None = None,
                   lease_s: float | None = None) -> StoreSet:
    """The team `team` in the database at `url` (`workdir` stays the host's own: worktrees,
    transcripts, audit). The caller closes the set (its connections)."""
    stale_s = stale_from_env()  # before connecting: a bad value starts nothing
    db = open_database(url, team)
    roster = PgRoster(db, team, stale_s=stale_s)
    board = PgTaskBoard(db, on_change, on_event=on_event, lease_s=lease_s,
                        owner_gone=PgOwnerLiveness(roster))
    return StoreSet(board=board, mail=PgMailbox(db, on_change=on_change), roster=roster,
                    protocols=PgProtocolStore(db),
                    location=BoardLocation("postgresql", url, team),
                    make_wakeups=lambda notify: Listener(db, notify), closer=db.close,
                    database=db)
