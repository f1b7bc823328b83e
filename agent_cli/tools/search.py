"""glob and grep over a directory tree inside the root, without following symlinks out.

The walk is `os.fwalk` from an fd of the base directory (found by tools.confined.locate) with
follow_symlinks=False: every directory is entered relative to its parent's fd and checked to
be the directory listed, so a directory swapped for a symlink mid-walk is not entered. grep
opens each file relative to its directory fd with O_NOFOLLOW | O_NONBLOCK and reads only
regular files: a symlink, FIFO, socket or device in the tree is skipped, never read or
waited on. Both stop with "interrupted" as soon as the caller's cancel event is set.

Neither lists nor searches git's and agent-cli's own folders (`.git`, `.agent-cli`, `.tasks`,
`.team`: the repository, worktrees, the board, inboxes and transcripts) unless asked for by
path: a `path` inside one, or a pattern or glob that names one (`.tasks/*.json`).
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

from ..errors import ToolError
from .confined import kind_of, locate, not_regular, open_regular
from .read_guard import ReadGuard, Withheld, check_readable

SKIP_DIRS = frozenset({".git", ".hg", ".svn", "__pycache__", "node_modules", ".venv"})
# never shown by a wildcard (a worktree's `.git` is a file): only when named
STATE_DIRS = frozenset({".git", ".agent-cli", ".tasks", ".team"})
_LEAF = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def _part_regex(part: str) -> str:
    """One path component of a glob as a regex: * ? [...] never match '/'."""
    out, i = [], 0
    while i < len(part):
        c = part[i]
        end = part.find("]", i + 2) if c == "[" else -1
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif end > 0:
            body = part[i + 1:end]
            body = "^" + body[1:] if body.startswith("!") else body
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = end
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def glob_regex(pattern: str) -> tuple[re.Pattern[str], int | None, bool]:
    """(regex over base-relative POSIX paths, max depth or None for '**', dirs only)."""
    parts = [p for p in pattern.split("/") if p not in ("", ".")]
    rx, deep = "", False
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if part == "**":
            deep = True
            rx += "(?:[^/]+(?:/[^/]+)*)?" if last else "(?:[^/]+/)*"
        else:
            rx += _part_regex(part) + ("" if last else "/")
    dirs_only = bool(parts) and parts[-1] == "**" or pattern.endswith("/")
    return re.compile(rx + r"\Z", re.S), None if deep else len(parts), dirs_only


def named_state_dirs(pattern: str | None) -> frozenset[str]:
    """The STATE_DIRS a pattern asks for by name (a whole path component, no wildcard)."""
    return STATE_DIRS.intersection(re.split(r"[/\\]", pattern or ""))


def _walk(base_fd: int, cancel: threading.Event, max_depth: int | None,
          named: frozenset[str] = frozenset()
          ) -> Iterator[tuple[str, list[str], list[str], int]]:
    """(base-relative dir, its subdirs, its files, its fd): SKIP_DIRS not entered,
    STATE_DIRS not even listed unless `named`."""
    hidden = STATE_DIRS - named
    skipped = SKIP_DIRS - named
    for dirpath, dirnames, filenames, dir_fd in os.fwalk(".", dir_fd=base_fd):
        if cancel.is_set():
            raise ToolError("interrupted by the user")
        rel = os.path.normpath(dirpath)
        depth = 0 if rel == "." else rel.count("/") + 1
        dirnames[:] = sorted(d for d in dirnames if d not in skipped and d not in hidden
                             and (max_depth is None or depth + 1 < max_depth))
        files = sorted(f for f in filenames if f not in hidden)
        yield ("" if rel == "." else rel + "/"), dirnames, files, dir_fd


def glob_paths(root: Path, base: str, pattern: str, cancel: threading.Event,
               guard: ReadGuard | None = None, withheld: Withheld | None = None) -> list[str]:
    """Root-relative paths under `base` matching `pattern` (directories end with '/'); an
    entry `guard` withholds is left out and counted in `withheld`."""
    regex, max_depth, dirs_only = glob_regex(pattern)
    hidden = STATE_DIRS - named_state_dirs(pattern)
    with locate(root, base) as loc:
        mode = kind_of(loc)
        if mode is None or not stat.S_ISDIR(mode):
            raise ToolError(f"{loc.shown} is not a directory")
        prefix = "" if loc.shown == "." else loc.shown + "/"
        base_fd = os.open(loc.name or ".", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW,
                          dir_fd=loc.dir_fd)
    found: list[str] = []
    try:
        if dirs_only and regex.match(""):
            found.append(prefix or "./")
        for rel, _dirs, _files, dir_fd in _walk(base_fd, cancel, max_depth,
                                                named_state_dirs(pattern)):
            with os.scandir(dir_fd) as entries:
                for entry in entries:
                    if entry.name in hidden:
                        continue
                    is_dir = entry.is_dir(follow_symlinks=False)
                    if (dirs_only and not is_dir) or not regex.match(rel + entry.name):
                        continue
                    shown = f"{prefix}{rel}{entry.name}"
                    rule = guard.withheld(shown, is_dir) if guard is not None else ""
                    if rule:
                        if withheld is not None:
                            withheld.add(rule)
                        continue
                    found.append(shown + ("/" if is_dir else ""))
    finally:
        os.close(base_fd)
    return sorted(found)


def grep_files(root: Path, base: str, glob: str | None, cancel: threading.Event,
               guard: ReadGuard | None = None, withheld: Withheld | None = None,
               ) -> Iterator[tuple[str, int]]:
    """(root-relative name, open fd of a regular file) for each file grep should read; the
    caller closes each fd. A file `base` is yielded alone (a FIFO there is a ToolError; one
    `guard` withholds, a ToolError too); a file met in a directory that `guard` withholds is
    never opened, only counted in `withheld`."""
    with locate(root, base) as loc:
        mode = kind_of(loc)
        if mode is None:
            raise ToolError(f"no such file or directory: {base}")
        if not stat.S_ISDIR(mode):
            if not stat.S_ISREG(mode):
                raise not_regular(loc.shown, mode)
            check_readable(guard, loc.shown)
            yield loc.shown, open_regular(loc)
            return
        prefix = "" if loc.shown == "." else loc.shown + "/"
        base_fd = os.open(loc.name or ".", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW,
                          dir_fd=loc.dir_fd)
    try:
        for rel, _dirs, files, dir_fd in _walk(base_fd, cancel, None, named_state_dirs(glob)):
            for name in files:
                shown = f"{prefix}{rel}{name}"
                if glob and not (fnmatch.fnmatch(name, glob) or fnmatch.fnmatch(shown, glob)):
                    continue
                rule = guard.withheld(shown) if guard is not None else ""
                if rule:
                    if withheld is not None:
                        withheld.add(rule)
                    continue
                try:
                    fd = os.open(name, _LEAF, dir_fd=dir_fd)
                except OSError:
                    continue  # a symlink (ELOOP), a socket, gone: not read
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    os.close(fd)
                    continue  # a FIFO or device: never read, never waited on
                yield shown, fd
    finally:
        os.close(base_fd)
