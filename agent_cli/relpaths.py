"""Paths read from a state file are confined before anything touches them.

`check_relpath` accepts only a plain relative path: no absolute path, no `..`, no empty or
`.` component, no NUL, no backslash trick, bounded length. `open_parent(root, rel)` then
walks its directories from an fd of `root`, each opened with `O_DIRECTORY | O_NOFOLLOW`, so
a symlink anywhere on the way is refused (never followed, even to a place inside the root):
the caller unlinks, replaces or stats the last component relative to the returned fd.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from .fsutil import describe

MAX_PATH = 4096
_DIR = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


class UnsafePath(ValueError):
    """A path from a state file that may not be touched; the message names it and why."""


def check_relpath(value: object) -> str:
    """`value` when it is a plain relative path inside its root; UnsafePath otherwise."""
    if not isinstance(value, str) or not value:
        raise UnsafePath(f"path {value!r} is not a file name")
    shown = value if len(value) <= 120 else value[:100] + "..."
    if len(value) > MAX_PATH or "\x00" in value:
        raise UnsafePath(f"path {shown!r} is too long or holds a NUL")
    if value.startswith(("/", "~")) or os.path.isabs(value):
        raise UnsafePath(f"path {shown!r} is absolute")
    parts = value.split("/")
    if any(p in ("", ".", "..") for p in parts):
        raise UnsafePath(f"path {shown!r} has an empty, '.' or '..' component")
    return value


def open_parent(root: Path, rel: str, *, create: bool = False) -> tuple[int, str]:
    """(fd of the directory holding `rel`'s last component, that component). Directories on
    the way are made when `create`; a symlink, file or device on the way is UnsafePath;
    a missing directory (not `create`) is FileNotFoundError."""
    parts = check_relpath(rel).split("/")
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    try:
        for i, name in enumerate(parts[:-1]):
            try:
                nfd = os.open(name, _DIR, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                os.mkdir(name, 0o777, dir_fd=fd)
                nfd = os.open(name, _DIR, dir_fd=fd)
            except OSError as exc:
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                    raise
                mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
                where = "/".join(parts[:i + 1])
                raise UnsafePath(f"cannot touch {rel}: {where} is {describe(mode)}, "
                                 "not a directory") from None
            os.close(fd)
            fd = nfd
        return fd, parts[-1]
    except BaseException:
        os.close(fd)
        raise


def kind_at(dir_fd: int, name: str) -> int | None:
    """st_mode of `name` in `dir_fd` (not followed), None when absent."""
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return None


def is_real_dir(mode: int | None) -> bool:
    return mode is not None and stat.S_ISDIR(mode)
