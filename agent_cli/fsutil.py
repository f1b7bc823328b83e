"""Small file primitives every store uses: safe opens, atomic replace, whole-line appends,
capped JSON parsing, UTC stamps (JSON-lines reading is jsonlines.py, built on these).

Every state file (under `.tasks/`, `.team/`, `.agent-cli/`) is reached by walking from the
directory above its state directory with `O_NOFOLLOW` on every component and opened with
`O_NOFOLLOW | O_NONBLOCK`, then `fstat`-checked to be a regular file under a size cap:
a symlink, FIFO, device, socket or directory anywhere on the way is an `UnusableFile`
naming it (never read, written through or followed). Writers set an unusable file aside
(`<name>.unusable-<stamp>`, never deleted) and start a fresh one; readers skip it.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import re
import secrets
import stat
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .errors import StorageError, UnusableFile

log = logging.getLogger(__name__)

STATE_DIRS = frozenset({".tasks", ".team", ".agent-cli"})
JSON_CAP = 4 << 20  # a whole-file JSON state file: task, config, requests, settings, cursor
LINE_CAP = 8 << 20  # one line of an append-only log: inbox message, audit entry, transcript record
LOG_CAP = 256 << 20  # an append-only log read whole (transcript, audit, events, quarantine)
CHUNK = 1 << 20
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_SURROGATE = re.compile("[\ud800-\udfff]")
_KINDS = (
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def utc_now() -> str:
    """Current time as UTC ISO 8601 with a trailing Z, millisecond precision."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def describe(mode: int) -> str:
    """What a file of this st_mode is, for messages: "a FIFO", "a symbolic link", ..."""
    return next((what for test, what in _KINDS if test(mode)), "not a regular file")


def parse_json(raw: bytes | str) -> Any:
    """json.loads where nesting too deep for the parser is a ValueError, not a RecursionError."""
    try:
        return json.loads(raw)
    except RecursionError:
        raise ValueError("nested too deeply to parse") from None


def over_cap(size: int, cap: int) -> str:
    return f"{size} bytes, over its {cap}-byte cap"


# ----- walking to a state file ----------------------------------------------------------------
def _split(path: Path) -> tuple[str, list[str]]:
    """(trusted root, components below it): the root is the directory holding the innermost
    state directory on the path (the workdir), else the file's own directory."""
    parts = Path(os.path.abspath(path)).parts
    marks = [i for i, part in enumerate(parts[:-1]) if part in STATE_DIRS]
    cut = marks[-1] if marks else len(parts) - 1
    return os.path.join(*parts[:cut]) if cut else os.sep, list(parts[cut:])


def _kind_at(dir_fd: int, name: str) -> str | None:
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return None
    return None if stat.S_ISREG(st.st_mode) else describe(st.st_mode)


def _open_dirs(root: str, names: list[str], create: bool) -> int:
    """An fd of root/names..., each component opened with O_NOFOLLOW (made when `create`)."""
    fd = os.open(root, os.O_RDONLY | _DIRECTORY | _CLOEXEC)  # the workdir may be a link
    shown = root
    try:
        for name in names:
            shown = os.path.join(shown, name)
            flags = os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC
            try:
                nfd = os.open(name, flags, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                try:
                    os.mkdir(name, 0o755, dir_fd=fd)
                except FileExistsError:
                    pass
                nfd = os.open(name, flags, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ENOTDIR, errno.ELOOP):
                    kind = _kind_at(fd, name) or "a regular file"
                    raise UnusableFile(shown, f"{kind}, not a directory") from None
                raise
            os.close(fd)
            fd = nfd
        return fd
    except BaseException:
        os.close(fd)
        raise


def open_dir(path: Path, *, create: bool = False) -> int:
    """An fd of state directory `path`, reached without following any symlink under its root."""
    root, names = _split(Path(path) / "_")
    return _open_dirs(root, names[:-1], create)


def open_state(path: Path, flags: int, mode: int = 0o644, *, create_dirs: bool = False) -> int:
    """An fd of the regular file `path` (see the module docstring); UnusableFile otherwise.

    FileNotFoundError when it (or a directory on the way, unless `create_dirs`) is missing.
    """
    root, names = _split(Path(path))
    dfd = _open_dirs(root, names[:-1], create_dirs)
    try:
        return open_at(dfd, names[-1], flags, mode, shown=path)
    finally:
        os.close(dfd)


def open_at(dir_fd: int, name: str, flags: int, mode: int = 0o644, *, shown: object) -> int:
    """os.open(name, dir_fd=dir_fd) that never follows a link, never blocks on a FIFO and
    returns only a regular file with one name (UnusableFile naming `shown` otherwise: a
    hard link could be another name of a file outside the workdir)."""
    try:
        fd = os.open(name, flags | _NOFOLLOW | _NONBLOCK | _CLOEXEC, mode, dir_fd=dir_fd)
    except FileNotFoundError:
        raise
    except OSError:
        kind = _kind_at(dir_fd, name)
        if kind is not None:
            raise UnusableFile(shown, f"{kind}, not a regular file") from None
        raise
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise UnusableFile(shown, f"{describe(st.st_mode)}, not a regular file")
    if st.st_nlink > 1:  # another name for the same file, maybe outside: as good as a link
        os.close(fd)
        raise UnusableFile(shown, f"a hard link ({st.st_nlink} names), not a file of its own")
    return fd


def read_fd(fd: int, cap: int, shown: object) -> bytes:
    """At most `cap` bytes of an open regular file; UnusableFile when it holds more."""
    size = os.fstat(fd).st_size
    if size > cap:
        raise UnusableFile(shown, over_cap(size, cap))
    chunks, total = [], 0
    while True:
        chunk = os.read(fd, min(CHUNK, cap + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        if total > cap:  # it grew while we read
            raise UnusableFile(shown, over_cap(total, cap))
    return b"".join(chunks)


def read_state(path: Path, cap: int = JSON_CAP) -> bytes | None:
    """The bytes of state file `path`, None when it does not exist; UnusableFile when it is
    not a regular file or is over `cap`; StorageError for any other read error."""
    try:
        fd = open_state(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StorageError(f"cannot read {path}: {exc.strerror or exc}") from exc
    try:
        return read_fd(fd, cap, path)
    except OSError as exc:
        raise StorageError(f"cannot read {path}: {exc.strerror or exc}") from exc
    finally:
        os.close(fd)


def ensure_dir(path: Path) -> None:
    """mkdir -p without following symlinks under the state root; StorageError naming the
    directory when it cannot be made (a file or a link there)."""
    try:
        os.close(open_dir(path, create=True))
    except UnusableFile:
        raise
    except OSError as exc:
        raise StorageError(f"cannot create {path}: {exc.strerror or exc}") from exc


def set_aside(path: Path, tag: str = "corrupt") -> Path | None:
    """Rename `path` (whatever it is: file, link, FIFO, directory) to `<name>.<tag>-<stamp>`
    in its own directory, never deleting anything. None when it does not exist."""
    path = Path(path)
    stamp = utc_now().replace(":", "").replace("-", "")
    try:
        dfd = open_dir(path.parent)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StorageError(f"cannot set aside {path}: {exc.strerror or exc}") from exc
    try:
        target = f"{path.name}.{tag}-{stamp}"
        while _exists_at(dfd, target):
            target = f"{path.name}.{tag}-{stamp}-{secrets.token_hex(2)}"
        os.rename(path.name, target, src_dir_fd=dfd, dst_dir_fd=dfd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StorageError(f"cannot set aside {path}: {exc.strerror or exc}") from exc
    finally:
        os.close(dfd)
    return path.with_name(target)


def _exists_at(dir_fd: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def prepare_lock(path: Path) -> None:
    """Before a file lock opens `path`: its directories must be real (made when missing),
    and a non-regular file planted there is set aside, so the lock never opens, truncates
    or creates anything through a link."""
    path = Path(path)
    dfd = open_dir(path.parent, create=True)
    try:
        kind = _kind_at(dfd, path.name)
        if kind is None and _exists_at(dfd, path.name):
            links = os.stat(path.name, dir_fd=dfd, follow_symlinks=False).st_nlink
            kind = f"a hard link ({links} names)" if links > 1 else None
    finally:
        os.close(dfd)
    if kind is not None:
        moved = set_aside(path, "unusable")
        log.warning("%s is %s, not a lock file; set aside as %s", path, kind, moved)


# ----- writing --------------------------------------------------------------------------------
def replace_at(dir_fd: int, name: str, data: bytes, mode: int, *, fsync: bool = True) -> None:
    """Atomically make `name` in directory `dir_fd` hold `data`: a temp file created in the
    same directory fd (O_EXCL | O_NOFOLLOW), fsync, os.replace between the same fd."""
    tmp = f".{name[:200]}.{secrets.token_hex(4)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o600,
                 dir_fd=dir_fd)
    try:
        try:
            os.fchmod(fd, mode)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            if fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=dir_fd)
        except OSError:
            pass
        raise


def encode_text(text: str) -> bytes:
    """`text` as UTF-8; a lone surrogate (`\\ud800`, which UTF-8 cannot carry) is written as
    the JSON escape `\\ud800`: in a JSON string (every state file) it reads back as the same
    text, and nothing that stores a model's or a tool's text ever fails on it."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text).encode("utf-8")


def atomic_write_text(path: Path, text: str, *, fsync: bool = True) -> None:
    """Write `text` to state file `path` atomically (see replace_at); the file keeps its mode.

    A reader sees the old content or the new one, never a mix. An existing `path` that is not
    a regular file is an UnusableFile (set it aside first); it is never replaced or followed.
    On failure (read-only or full disk) the old file is untouched and StorageError is raised.
    """
    path = Path(path)
    try:
        dfd = open_dir(path.parent, create=True)
    except UnusableFile:
        raise
    except OSError as exc:
        raise StorageError(f"cannot write {path}: {exc.strerror or exc}") from exc
    try:
        try:
            st = os.stat(path.name, dir_fd=dfd, follow_symlinks=False)
        except FileNotFoundError:
            st = None
        if st is not None and not stat.S_ISREG(st.st_mode):
            raise UnusableFile(path, f"{describe(st.st_mode)}, not a regular file")
        # keep the mode of the file being replaced (mkstemp's 0600 would hide shared state)
        mode = stat.S_IMODE(st.st_mode) if st is not None else 0o644
        replace_at(dfd, path.name, encode_text(text), mode, fsync=fsync)
    except OSError as exc:
        raise StorageError(f"cannot write {path}: {exc.strerror or exc}") from exc
    finally:
        os.close(dfd)


def atomic_write_json(path: Path, data: Any, *, fsync: bool = True) -> None:
    """atomic_write_text of `data` as indented, human-readable JSON."""
    atomic_write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n", fsync=fsync)


def _open_append(path: Path) -> int:
    """An append fd of state file `path`; a non-regular file there is set aside first."""
    flags = os.O_RDWR | os.O_CREAT | os.O_APPEND
    try:
        return open_state(path, flags, create_dirs=True)
    except UnusableFile as exc:
        if exc.path != path:
            raise  # a directory on the way: nothing of ours to set aside
        moved = set_aside(path, "unusable")
        log.warning("%s; set aside as %s, starting a fresh one", exc, moved)
        return open_state(path, flags | os.O_EXCL)


def append_line(path: Path, line: str, *, fsync: bool = True) -> int:
    """Append one whole line (newline added) with a single write(); return the end offset.

    Callers hold the file's lock, so concurrent appenders never interleave. If the file
    ends with an incomplete line (a writer was killed mid-write), a newline is written first
    so the torn fragment stays on its own line and the new record is intact.
    """
    path = Path(path)
    data = encode_text(line.rstrip("\n") + "\n")
    try:
        fd = _open_append(path)
    except UnusableFile:
        raise
    except OSError as exc:
        raise StorageError(f"cannot open {path}: {exc.strerror or exc}") from exc
    try:
        size = os.fstat(fd).st_size
        if size:
            last = os.pread(fd, 1, size - 1)
            if last != b"\n":
                data = b"\n" + data
        written = os.write(fd, data)
        if written != len(data):
            raise StorageError(f"short write to {path}")
        if fsync:
            os.fsync(fd)
        return size + len(data)
    except OSError as exc:
        raise StorageError(f"cannot append to {path}: {exc.strerror or exc}") from exc
    finally:
        os.close(fd)
