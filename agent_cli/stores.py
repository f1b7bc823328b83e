"""The one factory for a team's stores: `open_stores(workdir, location)` opens the board,
mailbox, roster and protocol store at a BoardLocation (storeset.py) — the workdir's files
(`.tasks/`, `.team/`), or a PostgreSQL database through the pg backend.

Everything that builds those stores goes through here (Runtime, the `tasks`/`team`/`inbox`/
`send`/`watch` commands), so a backend plugs in at one place. `configured_location` reads
where the board is: --board > $AGENT_CLI_BOARD > settings "board" of the user's own files
(~/.agent-cli/settings.json, an untracked settings.local.json of their own) > files. A
repository's settings cannot point the user's team at a database: a "board" there is named,
never used. Host-local things (sessions, transcripts, the audit log, worktrees) stay files.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import UserError
from .storeset import BOARD_ENV, BoardLocation, StoreSet, board_location, mask_url

if TYPE_CHECKING:
    from .events import TaskEvent

__all__ = ["BOARD_ENV", "BoardLocation", "StoreSet", "board_location", "configured_location",
           "mask_url", "open_stores", "own_board_setting"]
PG_INSTALL = "pip install 'agent-cli[postgres]'"
LOCAL = "settings.local.json"


def open_stores(workdir: Path, location: BoardLocation, *,
                on_change: Callable[[], None] | None = None,
                on_event: Callable[[TaskEvent], None] | None = None,
                lease_s: float | None = None) -> StoreSet:
    """The team's stores at `location`. `on_change` is called after every in-process write
    (board, mail), `on_event` with each board event; `lease_s` is the claim lease."""
    if location.kind == "postgresql":
        return _open_pg(workdir, location, on_change, on_event, lease_s)
    return open_file_stores(workdir, location, on_change=on_change, on_event=on_event,
                            lease_s=lease_s)


def open_file_stores(workdir: Path, location: BoardLocation | None = None, *,
                     on_change: Callable[[], None] | None = None,
                     on_event: Callable[[TaskEvent], None] | None = None,
                     lease_s: float | None = None) -> StoreSet:
    """`.tasks/` and `.team/` of `workdir`; an owner whose process ended on this host loses
    its leases at once (OwnerLiveness reads the roster's pid/host)."""
    from .board.store import TaskBoard
    from .filewatch import FileWatcher
    from .team.liveness import OwnerLiveness
    from .team.mailbox import Mailbox
    from .team.protocol import ProtocolStore
    from .team.roster import Roster

    workdir = Path(workdir)
    location = location or BoardLocation()
    team_dir = workdir / ".team"
    roster = Roster(team_dir, team_name=location.team)
    board = TaskBoard(workdir / ".tasks", on_change=on_change, on_event=on_event,
                      lease_s=lease_s, owner_gone=OwnerLiveness(roster))
    return StoreSet(board=board, mail=Mailbox(team_dir, on_change=on_change), roster=roster,
                    protocols=ProtocolStore(team_dir), location=location,
                    make_wakeups=lambda notify: FileWatcher(workdir, notify))


def _open_pg(workdir: Path, location: BoardLocation, on_change: Callable[[], None] | None,
             on_event: Callable[[TaskEvent], None] | None, lease_s: float | None) -> StoreSet:
    try:
        from .pg.stores import open_pg_stores

        return open_pg_stores(location.url, location.team, workdir=workdir,
                              on_change=on_change, on_event=on_event, lease_s=lease_s)
    except ImportError as exc:  # the extra is not installed (psycopg), or no backend yet
        missing = exc.name or "the PostgreSQL backend"
        raise UserError(f"board {location.shown}: the PostgreSQL backend is not installed "
                        f"({missing} missing): {PG_INSTALL}") from None


def own_board_setting(workdir: Path, user: Path | None = None) -> tuple[Any, list[str]]:
    """The "board" of the user's own agent-cli settings (~/.agent-cli/settings.json < an
    untracked settings.local.json of their own), and one note per repository file that sets
    one (never used). The files are read directly, as permissions/layers.py names them
    (a command does not pay for the settings machinery)."""
    from .permissions.settings import load_settings
    from .private_state import user_dir

    home = Path(user) if user is not None else user_dir()
    state = Path(workdir) / ".agent-cli"
    value: Any = None
    notes: list[str] = []
    for shown, path, own in (("~/.agent-cli/settings.json", home / "settings.json", True),
                             (".agent-cli/settings.json", state / "settings.json", False),
                             (".agent-cli/settings.local.json", state / LOCAL, None)):
        try:  # the user's own file may be a symlink (dotfiles); files in the workdir never
            data = load_settings(path.resolve() if own else path)
        except UserError:
            if own:
                raise  # the user's own file is broken: say so, never guess the backend
            continue  # a file in the workdir (maybe planted): the session's checks name it
        if "board" not in data:
            continue
        if own is None:  # settings.local.json: the user's unless git tracks it or not theirs
            from .permissions.project_trust import foreign

            own = not foreign(path)
        if own:
            value = data["board"]
        else:
            where = mask_url(data["board"]) if isinstance(data["board"], str) else "a value"
            notes.append(f'{shown}: "board" ({where}) is not used: only your own settings, '
                         f"--board or ${BOARD_ENV} choose where the team's board lives (a "
                         "repository's settings cannot)")
    return value, notes


def configured_location(workdir: Path, flag: str | None, env: Mapping[str, str] | None = None,
                        team: str = "default", user_dir: Path | None = None
                        ) -> tuple[BoardLocation, list[str]]:
    """Where the board is for a run in `workdir`, and the notes about settings not used.
    The settings files are read only when neither --board nor the variable decides."""
    env = os.environ if env is None else env
    if flag is not None or env.get(BOARD_ENV, "").strip():
        return board_location(flag, env, None, team), []
    value, notes = own_board_setting(workdir, user_dir)
    return board_location(None, env, value, team), notes
