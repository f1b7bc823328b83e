"""`agent-cli board init|status|migrate`: a team's schema on a PostgreSQL server, and its
state copied from a workdir's files into the database or back (pg/migrate.py does the copy).

Each needs a database (--board URL, $AGENT_CLI_BOARD or "board" in the user's own
settings). A migration refuses a target that already holds a board and is all-or-nothing;
a file it cannot copy (corrupt, planted, a link) is named on stderr and left out.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import StorageError, UserError
from ..safetext import visible

if TYPE_CHECKING:
    from ..storeset import BoardLocation


def add_parser(sub: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    """Register `board` with its three actions (each accepts -C and --board via `parent`)."""
    p = sub.add_parser(
        "board", parents=[parent],
        help="create a team's schema on PostgreSQL, show it, or copy a file board in or out",
        description="The team's board on a PostgreSQL server (--board URL, $AGENT_CLI_BOARD "
        "or \"board\" in your own settings): `init` creates or upgrades its schema, `status` "
        "shows its versions and contents, `migrate --from DIR` copies DIR's .tasks/ and "
        ".team/ into it, `migrate --to DIR` copies it back into DIR's files. A migration "
        "refuses a target that already holds a board.")
    actions = p.add_subparsers(dest="board_action", metavar="ACTION", required=True)
    for name, text, handler in (
            ("init", "create or upgrade the team's schema", run_init),
            ("status", "the schema's versions and how many tasks, events, messages, "
             "members it holds", run_status),
            ("migrate", "copy a file board into the database (--from) or back (--to)",
             run_migrate)):
        a = actions.add_parser(name, parents=[parent], help=text, description=text)
        a.set_defaults(handler=handler)
        if name == "migrate":
            way = a.add_mutually_exclusive_group(required=True)
            way.add_argument("--from", dest="source", metavar="DIR",
                             help="copy DIR's .tasks/ and .team/ into the database")
            way.add_argument("--to", dest="target", metavar="DIR",
                             help="copy the database into DIR's .tasks/ and .team/")


def _location(args: argparse.Namespace) -> BoardLocation:
    from ..stores import configured_location
    from .workdir import team_of, workdir_of

    team = team_of(args)
    location, notes = configured_location(workdir_of(args), getattr(args, "board", None),
                                          team=team)
    for note in notes:
        print(f"agent-cli: warning: {note}", file=sys.stderr)
    if location.kind != "postgresql" or not location.url:
        raise UserError(f"board {args.board_action} needs a PostgreSQL database: give "
                        "--board postgresql://user@host/db (or set $AGENT_CLI_BOARD)")
    return location


def _versions(found: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(found.items())) or "none"


def run_init(args: argparse.Namespace) -> int:
    where = _location(args)
    _need_pg()
    from ..pg.migrate import init

    try:
        schema, before, after = init(where.url or "", where.team)
    except StorageError as exc:
        if "permission denied for database" not in str(exc):
            raise
        raise StorageError(f"{exc} (the role needs CREATE on the database, or a schema "
                           f"agent_cli_{where.team.replace('-', '_')} it owns: see "
                           "docs/postgresql.md)") from None
    if not before:
        done = f"created (versions: {_versions(after)})"
    elif before == after:
        done = f"already up to date (versions: {_versions(after)})"
    else:
        done = f"upgraded from {_versions(before)} to {_versions(after)}"
    print(f"team {where.team}: schema {schema} at {where.shown}: {done}")
    return 0


def run_status(args: argparse.Namespace) -> int:
    where = _location(args)
    _need_pg()
    from ..pg.db import Database, schema_for_team
    from ..pg.migrate import counts, known_versions
    from ..pg.schema import versions

    db = Database(where.url or "", schema_for_team(where.team))
    try:
        found = versions(db)
        if not found:
            print(f"team {where.team}: schema {db.schema} at {where.shown}: not created "
                  "(run `agent-cli board init`)")
            return 1
        have = counts(db)
    finally:
        db.close()
    print(f"team {where.team}: schema {db.schema} at {where.shown}")
    print(f"versions: {_versions(found)} (this agent-cli: {_versions(known_versions())})")
    print(", ".join(f"{n} {kind}" for kind, n in have.items()))
    return 0


def run_migrate(args: argparse.Namespace) -> int:
    where = _location(args)
    _need_pg()
    from ..pg.db import Database, schema_for_team
    from ..pg.schema import versions

    directory = _directory(args.source or args.target)
    probe = Database(where.url or "", schema_for_team(where.team))
    try:
        created = versions(probe)
    finally:
        probe.close()
    if args.source is not None:
        return _into_database(directory, where)
    if not created:
        raise UserError(f"board migrate: team {where.team} has no schema {probe.schema} at "
                        f"{where.shown}: nothing to copy")
    return _into_files(directory, where)


def _into_database(directory: Path, where: BoardLocation) -> int:
    from ..pg.board_dump import read_files
    from ..pg.migrate import counts, into_database, refuse_busy
    from ..pg.stores import open_database

    if not any(os.path.lexists(directory / part) for part in (".tasks", ".team")):
        raise UserError(f"board migrate: {directory} has no board (no .tasks/ or .team/): "
                        "nothing to copy")
    db = open_database(where.url or "", where.team)
    try:
        refuse_busy(db, counts(db))  # before reading: a refusal is one line
        dump = read_files(directory)
        if dump.members and dump.team != where.team:
            dump.problems.append(f"{directory}'s roster names team {dump.team}: copied "
                                 f"into team {where.team}")
        _warn(dump.problems)
        into_database(dump, db)  # checks again, with the tables locked
    finally:
        db.close()
    print(f"copied {directory}'s board into team {where.team} ({db.schema} at "
          f"{where.shown}): {dump.counts()}")
    return 0


def _into_files(directory: Path, where: BoardLocation) -> int:
    from ..pg.migrate import from_database, into_files, refuse_used
    from ..pg.stores import open_database

    refuse_used(directory)
    db = open_database(where.url or "", where.team)
    try:
        dump = from_database(db)
    finally:
        db.close()
    _warn(dump.problems)
    dump.team = where.team
    into_files(dump, directory)
    print(f"copied team {where.team} ({db.schema} at {where.shown}) into {directory}: "
          f"{dump.counts()}")
    return 0


def _directory(raw: str) -> Path:
    path = Path(raw).expanduser()
    if not path.is_dir():
        raise UserError(f"board migrate: {raw} is not a directory")
    return path.resolve()


def _warn(problems: list[str]) -> None:
    for problem in problems:
        print(f"agent-cli: warning: {visible(problem)}", file=sys.stderr)


def _need_pg() -> None:
    """UserError in one line when the PostgreSQL extra (psycopg) is not installed."""
    try:
        import psycopg  # noqa: F401
    except ImportError as exc:
        from ..stores import PG_INSTALL

        raise UserError(f"the PostgreSQL backend is not installed ({exc.name} missing): "
                        f"{PG_INSTALL}") from None
