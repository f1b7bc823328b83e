"""Opening a path inside a root directory so that the check and the use are one operation.

`locate(root, raw)` walks the path one component at a time from an fd of the root, opening
each directory with `O_DIRECTORY | O_NOFOLLOW` relative to the previous one (openat-style).
A symlink met on the way is read with readlinkat and its target walked the same way: it
may lead anywhere inside the root, never outside (ToolError). What comes back is an fd of
the directory holding the last component and its name, so the caller opens, replaces or
lists relative to that fd: a directory swapped for a symlink after the walk cannot redirect
the operation, because it no longer goes through the path at all.

Leaves are opened with `O_NOFOLLOW | O_NONBLOCK` and fstat-checked (`open_regular`): a FIFO,
socket or device is a clear ToolError at once, never a blocked read. The root is whatever
the caller passes (the workdir today, a task's worktree tomorrow).
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from ..errors import ToolError
from ..fsutil import describe

MAX_LINKS = 40
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_LEAF_FLAGS = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class Missing(ToolError):
    """A directory on the way does not exist (and was not to be made)."""


@dataclass
class Located:
    """The directory fd holding the last component (the caller closes it), the component's
    name ("" when the path is the root itself) and the resolved root-relative parts."""

    dir_fd: int
    name: str
    parts: tuple[str, ...]

    @property
    def shown(self) -> str:
        """Root-relative POSIX form ("." for the root)."""
        return "/".join(self.parts) or "."

    def close(self) -> None:
        os.close(self.dir_fd)

    def __enter__(self) -> Located:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _shown(raw: str) -> str:
    return raw if len(raw) <= 80 else raw[:60] + "..." + raw[-10:]


def _relative_parts(root_real: str, text: str) -> list[str]:
    """The components of `text` below the root; an absolute path must point into it."""
    expanded = os.path.expanduser(text) if text.startswith("~") else text
    if os.path.isabs(expanded):
        norm = os.path.normpath(expanded)
        if norm != root_real and not norm.startswith(root_real.rstrip(os.sep) + os.sep):
            raise ToolError(f"path {_shown(text)} is outside the workdir")
        expanded = os.path.relpath(norm, root_real)
    elif os.path.normpath(expanded).split("/", 1)[0] == "..":
        raise ToolError(f"path {_shown(text)} is outside the workdir")
    return [p for p in expanded.split("/") if p not in ("", ".")]


def locate(root: Path, raw: str, *, create_dirs: bool = False) -> Located:
    """Walk `raw` inside `root` without following any link out (see the module docstring).

    Missing directories are made when `create_dirs` (write_file); otherwise a missing one is
    "no such file or directory". The last component need not exist.
    """
    from .paths import check_path_text

    text = check_path_text(raw)
    root_real = os.path.realpath(root)
    pending = _relative_parts(root_real, text)
    fds = [os.open(root_real, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)]
    names: list[str] = []
    links = 0
    try:
        while pending:
            comp = pending.pop(0)
            if comp == "..":
                if not names:
                    raise ToolError(f"path {_shown(text)} is outside the workdir")
                os.close(fds.pop())
                names.pop()
                continue
            try:
                st = os.stat(comp, dir_fd=fds[-1], follow_symlinks=False)
            except FileNotFoundError:
                st = None
            if st is not None and stat.S_ISLNK(st.st_mode):
                links += 1
                if links > MAX_LINKS:
                    raise ToolError(f"path {_shown(text)} has too many levels of symlinks")
                target = os.readlink(comp, dir_fd=fds[-1])
                if os.path.isabs(target):
                    norm = os.path.realpath(target)  # only to decide; the walk re-checks
                    if norm != root_real and not norm.startswith(root_real + os.sep):
                        raise ToolError(
                            f"path {_shown(text)} leads outside the workdir through a symlink")
                    while len(fds) > 1:  # restart from the root
                        os.close(fds.pop())
                    names.clear()
                    target = os.path.relpath(norm, root_real)
                pending[:0] = [p for p in target.split("/") if p not in ("", ".")]
                continue
            if not pending:  # the last component: the caller opens it through fds[-1]
                return Located(fds.pop(), comp, (*names, comp))
            if st is None and pending[0] == "..":  # `missing/..`: nothing to resolve
                pending.pop(0)
                continue
            fds.append(_enter(fds[-1], comp, st, text, create_dirs))
            names.append(comp)
        return Located(fds.pop(), "", tuple(names))
    except OSError as exc:
        raise ToolError(f"cannot open {_shown(text)}: {exc.strerror or exc}") from None
    finally:
        for fd in fds:
            os.close(fd)


def _enter(dir_fd: int, comp: str, st: os.stat_result | None, text: str, create: bool) -> int:
    """An fd of directory `comp` under `dir_fd`, opened without following a link."""
    if st is None:
        if not create:
            raise Missing(f"no such file or directory: {_shown(text)}")
        try:
            os.mkdir(comp, 0o777, dir_fd=dir_fd)
        except FileExistsError:
            pass
    elif not stat.S_ISDIR(st.st_mode):
        raise ToolError(f"path {_shown(text)}: {comp} is not a directory")
    try:
        return os.open(comp, _DIR_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):  # swapped for a link since the stat
            raise ToolError(f"path {_shown(text)}: {comp} changed while it was opened "
                            "(now a symlink or a file); nothing was done") from None
        raise


def kind_of(loc: Located) -> int | None:
    """st_mode of the located entry (not followed), None when it does not exist."""
    if not loc.name:
        return stat.S_IFDIR
    try:
        return os.stat(loc.name, dir_fd=loc.dir_fd, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return None


def not_regular(shown: str, mode: int) -> ToolError:
    if stat.S_ISDIR(mode):
        return ToolError(f"{shown} is a directory (use glob to list it)")
    return ToolError(f"{shown} is {describe(mode)}, not a regular file")


def open_regular(loc: Located, flags: int = os.O_RDONLY) -> int:
    """An fd of the located regular file; ToolError for anything else (never blocks)."""
    if not loc.name:
        raise not_regular(loc.shown, stat.S_IFDIR)
    try:
        fd = os.open(loc.name, flags | _LEAF_FLAGS, dir_fd=loc.dir_fd)
    except FileNotFoundError:
        raise ToolError(f"no such file: {loc.shown}") from None
    except OSError as exc:
        mode = kind_of(loc)
        if mode is not None and stat.S_ISLNK(mode):
            raise ToolError(f"{loc.shown} changed into a symlink while it was opened; "
                            "nothing was read") from None
        if mode is not None and not stat.S_ISREG(mode):
            raise not_regular(loc.shown, mode) from None
        raise ToolError(f"cannot open {loc.shown}: {exc.strerror or exc}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise not_regular(loc.shown, mode)
    return fd


def read_capped(fd: int, cap: int, shown: str) -> bytes:
    """The whole content of an open regular file, ToolError when it is over `cap` bytes."""
    size = os.fstat(fd).st_size
    if size > cap:
        raise ToolError(f"{shown} is {size} bytes, over the {cap}-byte read cap; "
                        "read a part of it with grep or a shell command")
    chunks, total = [], 0
    while True:
        chunk = os.read(fd, min(1 << 20, cap + 1 - total))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        if total > cap:
            raise ToolError(f"{shown} grew past the {cap}-byte read cap while it was read")


def read_bytes_in(root: Path, raw: str, cap: int) -> tuple[bytes, str]:
    """(content, root-relative name) of the regular file `raw` inside `root`."""
    with locate(root, raw) as loc:
        fd = open_regular(loc)
        try:
            return read_capped(fd, cap, loc.shown), loc.shown
        finally:
            os.close(fd)
