"""Reading an inbox from a byte offset in bounded memory: complete lines only, one window of
LINE_CAP bytes at a time, a line over the cap reported by its offset and skipped."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TypeVar

from ..fsutil import CHUNK, LINE_CAP

T = TypeVar("T")
QUARANTINE_PREFIX = 1000  # of an over-cap line, only this much is copied to the quarantine


def scan(fd: int, start: int, parse: Callable[[bytes], T]) -> tuple[list[T], list, int]:
    """(messages, bad lines as (offset, prefix, error), end offset) of the complete lines
    from `start`, read one window at a time: memory stays bounded by LINE_CAP however long a
    line is (an over-cap line is reported as bad by its offset, its text never held whole)."""
    messages: list[T] = []
    bad: list[tuple[int, bytes, str]] = []
    offset = start
    while True:
        data = os.pread(fd, LINE_CAP + 1, offset)
        end = data.rfind(b"\n") + 1  # an incomplete last line waits until it is complete
        if end == 0:
            if len(data) <= LINE_CAP:
                return messages, bad, offset
            skipped = _skip_line(fd, offset)
            if skipped is None:
                return messages, bad, offset  # still being written
            bad.append((offset, data[:QUARANTINE_PREFIX], f"over the {LINE_CAP}-byte line cap"))
            offset = skipped
            continue
        for raw in data[:end].split(b"\n")[:-1]:
            if raw.strip():
                try:
                    messages.append(parse(raw))
                except ValueError as exc:
                    bad.append((offset, raw, str(exc)))
            offset += len(raw) + 1
        if len(data) <= LINE_CAP:
            return messages, bad, offset


def _skip_line(fd: int, offset: int) -> int | None:
    """The offset just past the newline ending the line at `offset`; None if none yet."""
    while True:
        chunk = os.pread(fd, CHUNK, offset)
        if not chunk:
            return None
        at = chunk.find(b"\n")
        if at >= 0:
            return offset + at + 1
        offset += len(chunk)
