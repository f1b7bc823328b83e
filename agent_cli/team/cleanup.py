"""cleanupPeriodDays: at start, agent-cli's own sessions and transcripts older than N days go.

Claude Code deletes local chat transcripts older than `cleanupPeriodDays` at start (its
documentation: minimum 1, a 0 is refused). agent-cli does the same with its own files, and
only when the key is set (nothing is ever deleted by default), from the user's own layers
only: `~/.claude/settings.json`, `~/.agent-cli/settings.json` and an untracked
`settings.local.json`. A repository's file (the project's, or a local one git tracks or
another user owns) cannot make agent-cli delete anything: its key is ignored and named.

What may go, and nothing else:
- a session folder `.team/transcripts/sessions/<id>/` (id in agent-cli's form) whose files
  were all last written more than N days ago: its `session.json` and `<agent>.jsonl` files,
  then the folder when that left it empty (a folder holding anything else stays, said);
- a teammate transcript `.team/transcripts/<name>.jsonl` that old, named by no session kept.
The running session, the newest other one (what `-c` resumes) and one another live
process runs are always kept. Every directory is opened without following a symlink, every
entry is lstat-ed in its directory's fd, and only regular files are unlinked: a symlink,
FIFO or folder planted there is never followed, never removed.
"""

from __future__ import annotations

import os
import re
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import StorageError
from ..fsutil import open_dir
from ..names import NAME_RE
from .sessions import SESSION_RE, Session, SessionStore

if TYPE_CHECKING:
    from ..permissions.layers import SettingsLayers

KEY = "cleanupPeriodDays"
DAY_S = 86400
TRANSCRIPT_RE = re.compile(r"^[a-z][a-z0-9_-]{0,31}\.jsonl$")
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass
class Period:
    """The days to keep (None: no cleanup), the file that set it, and start-up notes."""

    days: int | None = None
    source: str = ""
    notes: list[str] = field(default_factory=list)


def period(layers: SettingsLayers) -> Period:
    """cleanupPeriodDays from the highest of the user's own layers that sets it."""
    out = Period()
    found: tuple[Any, str] | None = None
    for layer, data in layers.raw_loaded():
        if KEY not in data:
            continue
        if layer.kind == "project" or layers.foreign_local(layer):
            out.notes.append(f"{layer.shown}: {KEY} ignored: a repository's settings cannot "
                             "make agent-cli delete files (set it in your own settings)")
            continue
        found = (data[KEY], layer.shown)
    if found is None:
        return out
    value, shown = found
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        out.notes.append(f"{shown}: {KEY} {value!r} is not a whole number of days of 1 or "
                         "more (0 is refused, as in Claude Code); nothing removed")
        return out
    out.days, out.source = value, shown
    return out


@dataclass
class Removed:
    """What one cleanup removed, and what it left in place with why."""

    sessions: int = 0
    transcripts: int = 0
    kept: list[str] = field(default_factory=list)

    def line(self, days: int, source: str) -> str:
        """`removed 3 sessions older than 30 days (cleanupPeriodDays, ~/.claude/...)`."""
        bits = []
        if self.sessions:
            bits.append(f"{self.sessions} session{'s' if self.sessions != 1 else ''}")
        if self.transcripts:
            n = self.transcripts
            bits.append(f"{n} teammate transcript{'s' if n != 1 else ''}")
        if not bits:
            return ""
        return (f"removed {' and '.join(bits)} older than {days} day{'s' if days != 1 else ''}"
                f" ({KEY}, {source})")


def clean(team_dir: Path, days: int, current: Session | None,
          now: float | None = None) -> Removed:
    """Remove what is older than `days` (see the module docstring)."""
    cutoff = (now if now is not None else time.time()) - days * DAY_S
    done = Removed()
    store = SessionStore(team_dir)
    sessions = store.all()
    keep = _kept_ids(store, sessions, current)
    try:
        tfd = open_dir(Path(team_dir) / "transcripts")
    except (FileNotFoundError, StorageError, OSError):
        return done
    try:
        gone = _clean_sessions(tfd, cutoff, keep, done)
        named = {n for s in sessions if s.id not in gone for n in s.team}
        _clean_transcripts(tfd, cutoff, named, done)
    finally:
        os.close(tfd)
    return done


def _kept_ids(store: SessionStore, sessions: list[Session], current: Session | None
              ) -> set[str]:
    from .liveness import pid_ended
    from .roster import this_host

    keep = {current.id} if current is not None else set()
    others = [s for s in sessions if s.id not in keep and not s.empty]
    newest = max(others, key=lambda s: (s.resumed_at or s.started_at, s.id), default=None)
    if newest is not None:
        keep.add(newest.id)  # what -c picks up next
    for s in sessions:  # another process runs it right now
        if not s.ended_at and s.pid and s.host == this_host() and not pid_ended(s.pid):
            keep.add(s.id)
    return keep


def _clean_sessions(tfd: int, cutoff: float, keep: set[str], done: Removed) -> set[str]:
    """The ids of the session folders removed."""
    try:
        sfd = os.open("sessions", _DIR, dir_fd=tfd)
    except OSError:
        return set()  # none yet, or not a real directory: never followed
    gone: set[str] = set()
    try:
        for name in sorted(os.listdir(sfd)):
            if not SESSION_RE.match(name) or name in keep or not _is_dir(sfd, name):
                continue
            if _remove_session(sfd, name, cutoff, done):
                gone.add(name)
    finally:
        os.close(sfd)
    return gone


def _remove_session(sfd: int, name: str, cutoff: float, done: Removed) -> bool:
    try:
        dfd = os.open(name, _DIR, dir_fd=sfd)
    except OSError:
        return False
    try:
        entries = {e: os.stat(e, dir_fd=dfd, follow_symlinks=False) for e in os.listdir(dfd)}
        if max((st.st_mtime for st in entries.values()), default=0.0) >= cutoff:
            return False  # written to within the period
        ours = [e for e, st in entries.items() if stat.S_ISREG(st.st_mode)
                and (e == "session.json" or TRANSCRIPT_RE.match(e))]
        if not ours:
            return False  # nothing agent-cli wrote: not its to remove
        for entry in ours:
            os.unlink(entry, dir_fd=dfd)
    except OSError:
        return False
    finally:
        os.close(dfd)
    try:
        os.rmdir(name, dir_fd=sfd)
    except OSError:
        done.kept.append(f".team/transcripts/sessions/{name}: holds files agent-cli did not "
                         "write; left in place")
    done.sessions += 1
    return True


def _clean_transcripts(tfd: int, cutoff: float, named: set[str], done: Removed) -> None:
    for entry in sorted(os.listdir(tfd)):
        if not TRANSCRIPT_RE.match(entry) or entry[:-6] in named:
            continue
        if not NAME_RE.fullmatch(entry[:-6]):
            continue
        try:
            st = os.stat(entry, dir_fd=tfd, follow_symlinks=False)
            if stat.S_ISREG(st.st_mode) and st.st_mtime < cutoff:
                os.unlink(entry, dir_fd=tfd)
                done.transcripts += 1
        except OSError:
            continue


def _is_dir(dir_fd: int, name: str) -> bool:
    try:
        return stat.S_ISDIR(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def at_start(rt: Any) -> list[str]:
    """The start-up lines of the cleanup for the runtime `rt` (after its session opened)."""
    got = period(rt.settings)
    lines = list(got.notes)
    if got.days is None:
        return lines
    removed = clean(rt.team_dir, got.days, getattr(rt, "session", None))
    said = removed.line(got.days, got.source)
    return lines + ([said] if said else []) + removed.kept
