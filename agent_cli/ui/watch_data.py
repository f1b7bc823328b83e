"""What `agent-cli watch` shows, kept up to date cheaply: the board, the team, the last
events and the lead's unread count, each re-read only when its store says it changed.

Everything of the team is read through its stores (stores.py: files or a database), never
by path: `WatchSource.poll()` asks the board for its change stamp (files: one 64-byte read),
the roster and the lead's inbox for theirs (files: a few stats). The board snapshot and
its last events are taken only when the board's stamp moved (files: through the parsed
cache, which re-reads only the task files the stamp's journal names), the roster and the
unread count only when theirs did. This host's own files (the lead's usage ledger, the
worktree records) are stat-ed. Liveness of teammates is checked at most once a second.
Nothing here acknowledges an inbox or sets a file aside; the board is read like any other
reader does (files: which may create `.tasks/.lock` and finish the event-log append of a
writer that died halfway).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..board.models import BoardSnapshot
from ..errors import AgentCliError
from ..names import LEAD
from ..private_state import private_dir

if TYPE_CHECKING:
    from ..storeset import StoreSet

EVENTS_SHOWN = 15
MAX_WORKTREES_BYTES = 8_000_000  # the worktree records' own cap
RESCAN_S = 30.0  # look for hand edits (they do not move the stamp) this often
LIVENESS_S = 1.0

Sig = tuple[int, int, int] | None


@dataclass
class WatchState:
    """One consistent-enough view of the workdir for a frame."""

    root: str = ""  # the workdir: problem paths are shown relative to it
    host: str = ""  # this machine: teammates elsewhere cannot be checked for liveness
    board: BoardSnapshot = field(default_factory=BoardSnapshot)
    board_error: str = ""
    team: str = "default"
    members: list[Any] = field(default_factory=list)
    alive: dict[str, bool] = field(default_factory=dict)
    team_problem: str = ""
    events: list[dict[str, Any]] = field(default_factory=list)
    lead_unread: int = 0
    lead: dict[str, Any] | None = None  # .team/lead_usage.json: the lead's ledger, pid, host
    lead_alive: bool = False
    written: dict[int, int] = field(default_factory=dict)  # task id -> its last board write
    worktrees: dict[int, str] = field(default_factory=dict)  # task id -> its worktree's state
    version: int = 0  # bumped on every change


def file_sig(path: str | Path) -> Sig:
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def read_worktrees(path: str | Path) -> dict[int, str]:
    """Task id -> "active", "landing" or "refused" for each task a worktree holds, from the
    host-private `worktrees.json` (read like any state file: only those words are shown)."""
    from ..fsutil import read_state

    try:  # no link followed on the way, no FIFO waited on, a cap on the size
        data = json.loads(read_state(Path(path), MAX_WORKTREES_BYTES) or b"{}")
    except (AgentCliError, OSError, ValueError):
        return {}
    tasks = data.get("tasks") if isinstance(data, dict) else None
    if not isinstance(tasks, dict):
        return {}
    return {int(key): rec["status"] for key, rec in tasks.items()
            if key.isascii() and key.isdigit() and isinstance(rec, dict)
            and rec.get("status") in ("active", "landing", "refused")}


class WatchSource:
    """Polls one workdir's team through its stores. Not thread-safe: the watch loop owns it."""

    def __init__(self, workdir: Path, clock: Callable[[], float] = time.monotonic,
                 stores: StoreSet | None = None) -> None:
        from ..stores import open_file_stores
        from ..team.roster import this_host

        self.workdir = workdir
        self.stores = stores if stores is not None else open_file_stores(workdir)
        self._board = self.stores.board
        self._roster = self.stores.roster
        self._mail = self.stores.mail
        self._clock = clock
        self.state = WatchState(root=str(workdir), host=this_host())
        self._stamp: str | None = None
        self._marks: dict[str, Any] = {}
        self._board_at = self._alive_at = -1e9
        self._paths = {  # this host's own files (never the team's): str, a poll is syscalls
            "lead": str(workdir / ".team" / "lead_usage.json"),  # team/lead_usage.py
            "worktrees": str(private_dir(workdir) / "worktrees.json"),  # team/worktree_state
        }

    def poll(self) -> bool:
        """Re-read whatever changed since the last poll; True when the view changed."""
        now = self._clock()
        changed = False
        stamp = self._board.stamp()
        if stamp != self._stamp or now - self._board_at >= RESCAN_S:
            self._stamp = stamp
            self._board_at = now
            changed |= self._read_board()
            changed |= self._set("events", self._safe(self._board.recent_events, EVENTS_SHOWN,
                                                      default=[]))
        if self._moved("roster", self._roster.stamp()):
            self._read_team()
            changed = True
        if now - self._alive_at >= LIVENESS_S or changed:
            self._alive_at = now
            changed |= self._check_alive()
        if self._moved("lead", file_sig(self._paths["lead"])):
            from ..team.lead_usage import read_lead_usage

            changed |= self._set("lead", read_lead_usage(self.workdir / ".team"))
        if self._moved("worktrees", file_sig(self._paths["worktrees"])):
            changed |= self._set("worktrees", self._safe(read_worktrees, self._paths["worktrees"],
                                                         default={}))
        if self._moved("inbox", self._safe(self._mail.unread_stamp, LEAD, default=None)):
            changed |= self._set("lead_unread", self._safe(self._mail.unread_count, LEAD,
                                                           default=0))
        if changed:
            self.state.version += 1
        return changed

    def _moved(self, key: str, mark: Any) -> bool:
        if key in self._marks and self._marks[key] == mark:
            return False
        self._marks[key] = mark
        return True

    def _set(self, attr: str, value: Any) -> bool:
        if getattr(self.state, attr) == value:
            return False
        setattr(self.state, attr, value)
        return True

    @staticmethod
    def _safe(fn: Callable[..., Any], *args: Any, default: Any) -> Any:
        try:
            return fn(*args)
        except (AgentCliError, OSError):
            return default

    def _read_board(self) -> bool:
        try:
            snap, error = self._board.snapshot(), ""
        except (AgentCliError, OSError) as exc:
            snap, error = self.state.board, f"cannot read the board: {exc}"
        changed = snap is not self.state.board or error != self.state.board_error
        if changed:
            self.state.written = self._safe(self._board.write_order, default={})
        self.state.board, self.state.board_error = snap, error
        return changed
    def _read_team(self) -> None:
        snap = self._roster.snapshot()
        self.state.team = snap.team
        self.state.members = [m for m in snap.members if m.name != LEAD]
        self.state.team_problem = snap.problem or ""

    def _check_alive(self) -> bool:
        alive = {m.name: self._roster.is_alive(m) for m in self.state.members}
        lead = self.state.lead
        lead_alive = lead is not None and self._pid_alive(lead.get("pid"), lead.get("host"))
        return self._set("alive", alive) | self._set("lead_alive", lead_alive)

    @staticmethod
    def _pid_alive(pid: Any, host: Any) -> bool:
        from ..team.roster import this_host

        if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0 or host != this_host():
            return False
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        except OSError:
            return False
        return True
