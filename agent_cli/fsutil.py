"""Small file primitives every store uses: atomic replace, whole-line appends, JSON-lines
reading, UTC stamps."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .errors import StorageError


def utc_now() -> str:
    """Current time as UTC ISO 8601 with a trailing Z, millisecond precision."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def ensure_dir(path: Path) -> None:
    """mkdir -p; StorageError naming the directory when it cannot be made (a file there)."""
    try:
        Path(path).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StorageError(f"cannot create {path}: {exc.strerror or exc}") from exc


def atomic_write_text(path: Path, text: str, *, fsync: bool = True) -> None:
    """Write `text` to `path` atomically: temp file in the same directory, fsync, os.replace.

    A reader sees the old content or the new one, never a mix. On failure (read-only or full
    disk) the temp file is removed, the old file is untouched and StorageError is raised.
    """
    path = Path(path)
    try:
        mode = os.stat(path).st_mode & 0o777  # keep the mode of the file being replaced
    except OSError:
        mode = 0o644  # mkstemp's 0600 would hide shared state from the user's other tools
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise StorageError(f"cannot write {path}: {exc.strerror or exc}") from exc
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            if fsync:
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise StorageError(f"cannot write {path}: {exc.strerror or exc}") from exc


def atomic_write_json(path: Path, data: Any, *, fsync: bool = True) -> None:
    """atomic_write_text of `data` as indented, human-readable JSON."""
    atomic_write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n", fsync=fsync)


def append_line(path: Path, line: str, *, fsync: bool = True) -> int:
    """Append one whole line (newline added) with a single write(); return the end offset.

    Callers hold the file's lock, so concurrent appenders never interleave. If the file
    ends with an incomplete line (a writer was killed mid-write), a newline is written first
    so the torn fragment stays on its own line and the new record is intact.
    """
    data = (line.rstrip("\n") + "\n").encode("utf-8")
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
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


@dataclass(frozen=True)
class LineProblem:
    """A JSON-lines line that could not be used: `str()` gives `file:line: reason`."""

    path: str
    line: int
    reason: str

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"

    def __str__(self) -> str:
        return f"{self.where}: {self.reason}"


def read_jsonl(
    path: Path,
    *,
    report_torn: bool = False,
    check: Callable[[dict[str, Any]], str | None] | None = None,
) -> tuple[list[dict[str, Any]], list[LineProblem]]:
    """The JSON objects of a JSON-lines file, and one problem per malformed complete line.

    `check(record)` may return why a well-formed object is not a record of this file.

    A missing file reads as empty; any other read error is a StorageError naming the file.
    Blank lines are skipped. The part after the last newline is a line still being written
    (or left by a killed writer): it is skipped silently, or reported with `report_torn`.
    """
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        return [], []
    except OSError as exc:
        raise StorageError(f"cannot read {path}: {exc.strerror or exc}") from exc
    lines = raw.split(b"\n")
    torn = lines.pop()
    records: list[dict[str, Any]] = []
    problems: list[LineProblem] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line.decode("utf-8"))
        except ValueError:  # JSONDecodeError and UnicodeDecodeError
            problems.append(LineProblem(str(path), number, "not valid JSON"))
            continue
        why = "not a JSON object" if not isinstance(record, dict) else check and check(record)
        if why:
            problems.append(LineProblem(str(path), number, why))
            continue
        records.append(record)
    if report_torn and torn.strip():
        problems.append(LineProblem(str(path), len(lines) + 1, "incomplete last line"))
    return records, problems


def read_regular_text(path: Path, cap: int) -> str | None:
    """A regular file's text, never following a symlink and never blocking on a FIFO.

    None when `path` is not a regular file (symlink, FIFO, device, directory) or is over
    `cap` bytes; FileNotFoundError when it does not exist; OSError for other failures.
    """
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        if exc.errno in (40, 6, 21):  # ELOOP (a symlink), ENXIO (socket/FIFO), EISDIR
            return None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > cap:
            return None
        data = os.read(fd, cap + 1)
        while len(data) <= cap:
            more = os.read(fd, cap + 1 - len(data))
            if not more:
                break
            data += more
        if len(data) > cap:
            return None
        return data.decode("utf-8", errors="replace")
    finally:
        os.close(fd)
