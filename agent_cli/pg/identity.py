"""Which team a schema belongs to: the first team to open it records its name, and any
other team whose name maps to the same schema (`red-team` and `red_team` both become
`agent_cli_red_team`) is refused instead of sharing that team's board and NOTIFY channel."""

from __future__ import annotations

from ..errors import UserError
from ..storeset import mask_url
from .db import Database
from .schema import Component

_V1 = """
CREATE TABLE team_identity (
    one boolean PRIMARY KEY DEFAULT true CHECK (one),
    name text NOT NULL
)"""

IDENTITY = Component("identity", (_V1,))


def claim_schema(db: Database, team: str) -> None:
    """Record `team` as the schema's owner if none is; a UserError when another team owns it
    (its name shown as data: repr)."""
    with db.transaction() as conn:
        conn.execute("INSERT INTO team_identity (name) VALUES (%s) ON CONFLICT (one) "
                     "DO NOTHING", (team,))
        row = conn.execute("SELECT name FROM team_identity").fetchone()
    owner = row[0] if row else None
    if owner != team:
        raise UserError(f"team {team!r}: schema {db.schema} on {mask_url(db.url)} belongs to "
                        f"team {owner!r} (names differing only in - and _ share a schema): "
                        "pick another team name")
