"""Reading the Markdown files of a `.claude/` folder safely: a folder is walked without
following symlinks, and a file is read only when it is a regular file (not a symlink, FIFO or
device) under a size cap. Odd entries are reported by name, never followed."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

MAX_BYTES = 64 * 1024
MAX_FILES = 200


def read_small(path: Path, problems: list[str], cap: int = MAX_BYTES) -> str | None:
    """The text of the regular file `path` (not a symlink), or None with a problem said."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        why = "a symlink; not followed" if os.path.islink(path) else exc.strerror or str(exc)
        problems.append(f"{path}: {why}")
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            problems.append(f"{path}: not a regular file; not read")
            return None
        if st.st_size > cap:
            problems.append(f"{path}: {st.st_size} bytes, over the {cap // 1024} KB limit; "
                            "not read")
            return None
        data = os.read(fd, cap + 1)
    except OSError as exc:
        problems.append(f"{path}: cannot read ({exc.strerror or exc})")
        return None
    finally:
        os.close(fd)
    return data.decode("utf-8", errors="replace")


def real_dir(path: Path, problems: list[str]) -> bool:
    """True when `path` is a directory that is not a symlink (a symlink is reported)."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    if stat.S_ISLNK(st.st_mode):
        problems.append(f"{path}: a symlink; not followed")
        return False
    return stat.S_ISDIR(st.st_mode)


def markdown_files(root: Path, problems: list[str]) -> Iterator[Path]:
    """Every `*.md` under `root` (sorted, symlinked folders not entered), at most
    MAX_FILES."""
    if not real_dir(root, problems):
        return
    count = 0
    for here, dirs, files in os.walk(root, followlinks=False):
        dirs.sort()
        for name in list(dirs):
            if os.path.islink(os.path.join(here, name)):
                problems.append(f"{Path(here) / name}: a symlink; not followed")
                dirs.remove(name)
        for name in sorted(files):
            if not name.endswith(".md"):
                continue
            count += 1
            if count > MAX_FILES:
                problems.append(f"{root}: more than {MAX_FILES} files; the rest not read")
                return
            yield Path(here) / name
