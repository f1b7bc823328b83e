"""Reading and writing one workspace file through tools.confined: the path is walked from the
root with O_NOFOLLOW on every component, and the read or the atomic replace happens relative
to the directory fd that walk ended on, so no symlink swap can send it outside the root.
Writes: a temp file in the same directory fd, fsync, os.replace between the same fd; the
file keeps its mode, line endings are kept as given.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..errors import ToolError
from ..fsutil import replace_at
from .confined import Missing, kind_of, locate, not_regular, open_regular, read_capped
from .read_guard import ReadGuard, check_readable

READ_CAP = 32 << 20  # read_file / edit_file / previews read at most this much


def decode_text(data: bytes, shown: str) -> str:
    if b"\x00" in data[:8192]:
        raise ToolError(f"{shown} is a binary file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"{shown} is not UTF-8 text") from None


def read_bytes(root: Path, raw: str, guard: ReadGuard | None = None) -> tuple[bytes, str]:
    """(content, shown name) of the regular file `raw` inside `root`, up to READ_CAP; a
    file `guard` withholds (by the path the walk reached) is a ToolError before it is
    opened."""
    with locate(root, raw) as loc:
        check_readable(guard, loc.shown)
        fd = open_regular(loc)
        try:
            return read_capped(fd, READ_CAP, loc.shown), loc.shown
        except OSError as exc:
            raise ToolError(f"cannot read {loc.shown}: {exc.strerror or exc}") from None
        finally:
            os.close(fd)


def read_text(root: Path, raw: str, guard: ReadGuard | None = None) -> tuple[str, str]:
    """(text, shown name) of the regular text file `raw` inside `root` (see read_bytes)."""
    data, shown = read_bytes(root, raw, guard)
    return decode_text(data, shown), shown


def current_text(root: Path, raw: str) -> tuple[str, str]:
    """read_text for a preview: ("", shown) when the file (or its directory) does not exist."""
    try:
        loc = locate(root, raw)
    except Missing:
        return "", os.path.normpath(str(raw))
    with loc:
        mode = kind_of(loc)
        if mode is None:
            return "", loc.shown
        if not stat.S_ISREG(mode):
            raise not_regular(loc.shown, mode)
    return read_text(root, raw)


def check_writable(root: Path, raw: str) -> str:
    """The shown name of `raw` when a write could replace it (no directories are made)."""
    try:
        loc = locate(root, raw)
    except Missing:
        return os.path.normpath(str(raw))
    with loc:
        mode = kind_of(loc)
        if mode is not None and not stat.S_ISREG(mode):
            raise _not_writable(loc.shown, mode)
        return loc.shown


def write_text(root: Path, raw: str, text: str) -> tuple[str, bool]:
    """Atomically make `raw` inside `root` hold `text`; (shown name, whether it existed)."""
    with locate(root, raw, create_dirs=True) as loc:
        mode = kind_of(loc)
        if mode is not None and not stat.S_ISREG(mode):
            raise _not_writable(loc.shown, mode)
        if mode is None:
            umask = os.umask(0)
            os.umask(umask)
            bits = 0o666 & ~umask
        else:
            bits = stat.S_IMODE(mode)
        try:
            replace_at(loc.dir_fd, loc.name, text.encode("utf-8"), bits)
        except OSError as exc:
            raise ToolError(f"cannot write {loc.shown}: {exc.strerror or exc}") from None
        return loc.shown, mode is not None


def _not_writable(shown: str, mode: int) -> ToolError:
    if stat.S_ISDIR(mode):
        return ToolError(f"{shown} is a directory")
    return not_regular(shown, mode)
