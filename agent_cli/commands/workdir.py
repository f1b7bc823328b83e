"""-C/--workdir and --board: the options every command accepts, the directory the first
names, and the team's stores at the place the second (or its fallbacks) names."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import UserError

if TYPE_CHECKING:
    from ..storeset import BoardLocation, StoreSet

BOARD_HELP = ("the team's board, inboxes and roster in this PostgreSQL database "
              "(postgresql://user@host/db; default: $AGENT_CLI_BOARD, else \"board\" in your "
              "own settings, else .tasks/ and .team/ in the workdir)")


TEAM_ENV = "AGENT_CLI_TEAM"
TEAM_HELP = ("the team's name (default: $AGENT_CLI_TEAM, else default); on a PostgreSQL "
             "board it picks the team inside the database (schema agent_cli_<NAME>)")


def workdir_parent() -> argparse.ArgumentParser:
    """-C/--workdir and --board, accepted before or after a subcommand."""
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument(
        "-C",
        "--workdir",
        default=argparse.SUPPRESS,
        metavar="DIR",
        help="where .tasks/ and .team/ live (default: the current directory)",
    )
    p.add_argument("--board", default=argparse.SUPPRESS, metavar="URL", help=BOARD_HELP)
    p.add_argument("--team", default=argparse.SUPPRESS, metavar="NAME", help=TEAM_HELP)
    return p


def team_of(args: argparse.Namespace) -> str:
    """The team's name: --team > $AGENT_CLI_TEAM > "default" (a name slug, else UserError).
    On a database board it picks the schema; on files it names the team in config.json."""
    import os

    from ..names import check_name

    raw = getattr(args, "team", None) or os.environ.get(TEAM_ENV, "").strip() or "default"
    return check_name(raw, "team name")


def workdir_of(args: argparse.Namespace) -> Path:
    """The -C directory (default: the current one), resolved; UserError if it is none."""
    raw = getattr(args, "workdir", None) or "."
    path = Path(raw).expanduser()
    if not path.is_dir():
        raise UserError(f"workdir {raw} is not a directory")
    return path.resolve()


def location_of(args: argparse.Namespace) -> BoardLocation:
    """Where the team's state is (stores.configured_location); a repository's "board"
    setting is named on stderr, once per command."""
    found = getattr(args, "_board_location", None)
    if found is not None:
        return found
    from ..stores import configured_location

    location, notes = configured_location(workdir_of(args), getattr(args, "board", None),
                                          team=team_of(args))
    for note in notes:
        print(f"agent-cli: warning: {note}", file=sys.stderr)
    args._board_location = location
    return location


def stores_of(args: argparse.Namespace) -> StoreSet:
    """The team's stores for this command, opened once (stores.open_stores) with the claim
    lease of $AGENT_CLI_LEASE_S; closed by the entry when the command ends (close_stores)."""
    opened = getattr(args, "_stores", None)
    if opened is not None:
        return opened
    import os

    from ..board.leases import lease_from_env
    from ..stores import open_stores

    opened = open_stores(workdir_of(args), location_of(args),
                         lease_s=lease_from_env(os.environ))
    args._stores = opened
    return opened


def close_stores(args: argparse.Namespace) -> None:
    """Let go of the stores a command opened (a database's connections), if it did."""
    opened = getattr(args, "_stores", None)
    if opened is not None:
        args._stores = None
        opened.close()
