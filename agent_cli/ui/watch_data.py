"""What `agent-cli watch` shows, kept up to date cheaply: the board, the team, the last
events and the lead's unread count, each re-read only when its file changed.

`WatchSource.poll()` costs a few stat calls and one 64-byte read of the board's change
stamp when nothing changed: the board snapshot is taken (through the board's parsed cache,
which re-reads only the task files the stamp's journal names) only when the stamp moved,
and the roster, event log and inbox only when their (mtime, size, inode) changed. Liveness
of teammates' processes is checked at most once a second. Nothing here acknowledges an
inbox or sets a file aside; the board is read through TaskBoard like any other reader (which
may create `.tasks/.lock` and finish the event-log append of a writer that died halfway).
"""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..board.journal import read_journal, read_stamp, write_order
from ..board.models import BoardSnapshot
from ..errors import AgentCliError
from ..names import LEAD
from ..private_state import private_dir

EVENTS_SHOWN = 15
TAIL_BYTES = 32768
MAX_INBOX_BYTES = 8 * 1024 * 1024
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


def read_regular(path: str | Path, offset: int = 0, limit: int = TAIL_BYTES) -> bytes:
    """Up to `limit` bytes of a regular file from `offset` (negative: from the end); b""
    for a missing file. Never follows a symlink or blocks on a FIFO: OSError for those."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return b""
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(f"{path} is not a regular file")
        start = max(0, st.st_size + offset) if offset < 0 else min(offset, st.st_size)
        fh.seek(start)
        return fh.read(limit)


def tail_events(path: str | Path, count: int = EVENTS_SHOWN) -> list[dict[str, Any]]:
    """The last `count` complete, well-formed records of events.jsonl."""
    raw = read_regular(path, -TAIL_BYTES)
    lines = raw.split(b"\n")[:-1]  # the part after the last newline is still being written
    if len(raw) == TAIL_BYTES and lines:
        lines = lines[1:]  # the first line may be cut by the tail's start
    records = []
    for line in reversed(lines):
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            records.append(record)
            if len(records) == count:
                break
    return list(reversed(records))


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


def count_unread(inbox: str | Path, cursor: str | Path) -> int:
    """Complete lines after the reader's cursor: the messages nobody has taken in yet."""
    try:
        offset = int(json.loads(read_regular(cursor) or b"{}").get("offset", 0))
    except (ValueError, AttributeError, TypeError):
        offset = 0  # a corrupt cursor means "redeliver from the start"
    data = read_regular(inbox, max(0, offset), MAX_INBOX_BYTES)
    return sum(1 for line in data.split(b"\n")[:-1] if line.strip())


class WatchSource:
    """Polls one workdir. Not thread-safe: the watch loop owns it."""

    def __init__(self, workdir: Path, clock: Callable[[], float] = time.monotonic) -> None:
        from ..board.store import TaskBoard
        from ..team.roster import Roster

        self.workdir = workdir
        self.tasks_dir = workdir / ".tasks"
        self.team_dir = workdir / ".team"
        self._board = TaskBoard(self.tasks_dir)
        self._roster = Roster(self.team_dir)
        self._clock = clock
        from ..team.roster import this_host

        self.state = WatchState(root=str(workdir), host=this_host())
        self._stamp: str | None = None
        self._sigs: dict[str, Sig] = {}
        self._board_at = self._alive_at = -1e9
        inbox = self.team_dir / "inbox"
        self._paths = {  # str, not Path: a poll is a few syscalls, not pathlib work
            "stamp": str(self.tasks_dir / ".stamp"),
            "events": str(self.tasks_dir / "events.jsonl"),
            "config": str(self.team_dir / "config.json"),
            "inbox": str(inbox / f"{LEAD}.jsonl"),
            "cursor": str(inbox / f"{LEAD}.cursor"),
            "lead": str(self.team_dir / "lead_usage.json"),
            "worktrees": str(private_dir(workdir) / "worktrees.json"),  # team/worktree_state
        }

    def poll(self) -> bool:
        """Re-read whatever changed since the last poll; True when the view changed."""
        now = self._clock()
        changed = False
        paths = self._paths
        stamp = read_stamp(paths["stamp"])
        if stamp != self._stamp or now - self._board_at >= RESCAN_S:
            self._stamp = stamp
            self._board_at = now
            changed |= self._read_board()
        if self._moved("config"):
            self._read_team()
            changed = True
        if now - self._alive_at >= LIVENESS_S or changed:
            self._alive_at = now
            changed |= self._check_alive()
        if self._moved("lead"):
            from ..team.lead_usage import read_lead_usage

            changed |= self._set("lead", read_lead_usage(self.team_dir))
        if self._moved("worktrees"):
            changed |= self._set("worktrees", self._safe(read_worktrees, paths["worktrees"],
                                                         default={}))
        if self._moved("events"):
            changed |= self._set("events", self._safe(tail_events, paths["events"], default=[]))
        if self._moved("inbox") | self._moved("cursor"):
            unread = self._safe(count_unread, paths["inbox"], paths["cursor"], default=0)
            changed |= self._set("lead_unread", unread)
        if changed:
            self.state.version += 1
        return changed

    def _moved(self, key: str) -> bool:
        sig = file_sig(self._paths[key])
        if key in self._sigs and self._sigs[key] == sig:
            return False
        self._sigs[key] = sig
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
        except OSError:
            return default

    def _read_board(self) -> bool:
        try:
            snap, error = self._board.snapshot(), ""
        except (AgentCliError, OSError) as exc:
            snap, error = self.state.board, f"cannot read the board: {exc}"
        changed = snap is not self.state.board or error != self.state.board_error
        if changed:
            journal = read_journal(self.tasks_dir / ".stamp")
            self.state.written = write_order(journal) if journal else {}
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
