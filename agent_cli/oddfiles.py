"""Odd entries where agent-cli keeps state, found and named: a symlink, FIFO, socket, device
or hard link in `.tasks/`, `.team/` (its inbox and transcripts too) or `.agent-cli/`, and
what an earlier run set aside (`<name>.unusable-<stamp>`, `<name>.corrupt-<stamp>`).

The stores never read, write through or follow such an entry (fsutil); this module is how
the user hears about each one by name: `tasks doctor` lists them, and the verbs that write
the board warn about those they met (`watch_board`). Every directory is entered with the
same O_NOFOLLOW walk the stores use (a state directory that is a link is itself reported,
never entered); nothing here opens a file. A base module (commands/ use it).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .errors import UnusableFile
from .fsutil import describe, open_dir

# (state directory, walk its subdirectories too)
SCOPES = ((".tasks", False), (".team", False), (".team/inbox", False),
          (".team/transcripts", True), (".agent-cli", False))
# files the stores expect by name: a directory there is as odd as a link
FILE_NAMES = frozenset({".next_id", ".stamp", ".lock", "events.jsonl", "tokens", "config.json",
                        "requests.json", "protocol.log.jsonl", "audit.jsonl", "lead_usage.json",
                        "settings.json", "settings.local.json", "history", "landing.json"})
BOARD = ((".tasks", False),)
ASIDE = re.compile(r"\.(unusable|corrupt)-\d")


@dataclass(frozen=True)
class OddEntry:
    path: str  # workdir-relative, as the user types it
    what: str  # "a FIFO", "a symbolic link", "a hard link (2 names)"
    aside: bool = False  # set aside by an earlier run (kept, never used)

    def line(self) -> str:
        if self.aside:
            return (f"{self.path}: {self.what} set aside earlier (never read or followed; "
                    "remove it once you have looked at it)")
        return f"{self.path}: {self.what}, not a regular file (never read, written or followed)"


def _oddity(st: os.stat_result, name: str) -> str | None:
    mode = st.st_mode
    if stat.S_ISDIR(mode):
        task_file = name.startswith("task_") and name.endswith(".json")
        return describe(mode) if name in FILE_NAMES or task_file else None
    if not stat.S_ISREG(mode):
        return describe(mode)
    if st.st_nlink > 1:
        return f"a hard link ({st.st_nlink} names)"
    return None


def _entries(dir_fd: int, rel: str, deep: bool) -> Iterator[OddEntry]:
    for name in sorted(os.listdir(dir_fd)):
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except OSError:
            continue  # gone meanwhile
        what = _oddity(st, name)
        shown = f"{rel}/{name}"
        if what is not None or (ASIDE.search(name) and not stat.S_ISDIR(st.st_mode)):
            aside = bool(ASIDE.search(name))
            yield OddEntry(shown, what or "a file", aside)
        elif deep and stat.S_ISDIR(st.st_mode):
            try:
                sub = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dir_fd)
            except OSError:
                continue
            try:
                yield from _entries(sub, shown, deep)
            finally:
                os.close(sub)


def scan(workdir: Path, scopes: tuple[tuple[str, bool], ...] = SCOPES) -> list[OddEntry]:
    """Every odd entry (and set-aside leftover) in the state directories of `workdir`."""
    found: list[OddEntry] = []
    for rel, deep in scopes:
        path = Path(workdir) / rel
        if not os.path.lexists(path):
            continue
        try:
            dfd = open_dir(path)
        except UnusableFile as exc:  # a link or a FIFO where the directory goes
            shown = str(exc.path)
            if Path(shown).is_absolute() and Path(shown).is_relative_to(workdir):
                shown = str(Path(shown).relative_to(workdir))
            found.append(OddEntry(shown, exc.detail.split(",")[0]))
            continue
        except OSError:
            continue
        try:
            found += _entries(dfd, rel, deep)
        finally:
            os.close(dfd)
    return found


class BoardWatch:
    """What a board-writing verb met: odd entries in `.tasks/` before it ran, and where each
    one is after (set aside as `<name>.unusable-...`, or left alone)."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = Path(workdir)
        found = scan(self.workdir, BOARD)
        self.before = [e for e in found if not e.aside]
        self._aside = {e.path for e in found if e.aside}

    def lines(self) -> list[str]:
        if not self.before:
            return []
        after = {e.path for e in scan(self.workdir, BOARD) if e.aside} - self._aside
        out = []
        for entry in self.before:
            moved = sorted(p for p in after if p.startswith(entry.path + ".unusable-"))
            if moved:
                out.append(f"{entry.path} was {entry.what}, not a regular file: set aside as "
                           f"{moved[-1]} (never read or followed), a fresh one started")
            else:
                out.append(entry.line())
        return out
