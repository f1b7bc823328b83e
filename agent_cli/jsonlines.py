"""Reading a JSON-lines state file (inbox, audit log, transcript, events) in bounded memory:
the file is opened like every state file (fsutil.open_state: no symlink, FIFO or device) and
read in chunks, so an oversized line is reported and skipped, never held whole.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import StorageError, UnusableFile
from .fsutil import CHUNK, LINE_CAP, LOG_CAP, open_state, over_cap, parse_json


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
    line_cap: int = LINE_CAP,
    cap: int = LOG_CAP,
) -> tuple[list[dict[str, Any]], list[LineProblem]]:
    """The JSON objects of a JSON-lines file, and one problem per malformed complete line.

    `check(record)` may return why a well-formed object is not a record of this file.

    A missing file reads as empty; one that is not a regular file, or is over `cap`, is an
    UnusableFile; any other read error is a StorageError naming the file. The file is read
    in chunks: a line over `line_cap` is reported and skipped without being held in memory.
    Blank lines are skipped. The part after the last newline is a line still being written
    (or left by a killed writer): it is skipped silently, or reported with `report_torn`.
    """
    try:
        fd = open_state(Path(path), os.O_RDONLY)
    except FileNotFoundError:
        return [], []
    except OSError as exc:
        raise StorageError(f"cannot read {path}: {exc.strerror or exc}") from exc
    records: list[dict[str, Any]] = []
    problems: list[LineProblem] = []
    try:
        size = os.fstat(fd).st_size
        if size > cap:
            raise UnusableFile(path, over_cap(size, cap))
        number, torn = 0, b""
        for number, line in _lines(fd, line_cap):
            if line is None:
                problems.append(LineProblem(str(path), number, f"over the {line_cap}-byte "
                                            "line cap, skipped"))
            elif line.endswith(b"\n"):
                _parse_line(line, number, str(path), check, records, problems)
            else:
                torn = line
    except OSError as exc:
        raise StorageError(f"cannot read {path}: {exc.strerror or exc}") from exc
    finally:
        os.close(fd)
    if report_torn and torn.strip():
        problems.append(LineProblem(str(path), number, "incomplete last line"))
    return records, problems


def _lines(fd: int, line_cap: int) -> Iterator[tuple[int, bytes | None]]:
    """(line number, bytes with its newline | the torn tail | None when over line_cap)."""
    buf, number, skipping = b"", 0, False
    while True:
        chunk = os.read(fd, CHUNK)
        if not chunk:
            break
        buf += chunk
        start = 0
        while True:
            end = buf.find(b"\n", start)
            if end < 0:
                break
            number += 1
            if skipping or end + 1 - start > line_cap:
                yield number, None
                skipping = False
            else:
                yield number, buf[start:end + 1]
            start = end + 1
        buf = buf[start:]
        if len(buf) > line_cap:
            skipping, buf = True, b""
    if skipping:
        yield number + 1, None
    elif buf:
        yield number + 1, buf


def _parse_line(
    line: bytes, number: int, path: str, check: Any, records: list, problems: list
) -> None:
    if not line.strip():
        return
    try:
        record = parse_json(line.decode("utf-8"))
    except ValueError:  # JSONDecodeError, UnicodeDecodeError, nested too deeply
        problems.append(LineProblem(path, number, "not valid JSON"))
        return
    why = "not a JSON object" if not isinstance(record, dict) else check and check(record)
    if why:
        problems.append(LineProblem(path, number, why))
        return
    records.append(record)
