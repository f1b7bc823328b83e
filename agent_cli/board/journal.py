"""The board's change stamp, `.tasks/.stamp`: a cheap "did anything change?" plus which tasks.

Line 1 is `<epoch>:<seq>`; `seq` grows by one on every board write, `epoch` is random and
changes only when the file is recreated (so a deleted stamp can never repeat an old value).
Line 2 lists the last RING writes as space-separated `seq:id,id,...` items. The file is rewritten
in place (see `overwrite_small`), not renamed, to keep a board write close to one fsync.

A writer rewrites the stamp under the board lock *before* it touches any task file
(write-ahead): a process killed halfway still leaves a stamp that tells every reader which
files to re-read. A reader whose cache is at (epoch, seq0) re-reads exactly the ids listed
with a seq > seq0; when the ring no longer reaches back that far, it rescans the directory.

Line 3, present only while a write is in flight, carries that write's events.jsonl records
(see eventlog.pending_line); the writer drops it once the records are appended. Finding it
under the lock means the writer died (or failed) halfway: the next locked refresh appends
whichever of those records describe a task write that landed and are not in the log yet.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass, replace
from pathlib import Path

from ..errors import StorageError, UnusableFile
from ..fsutil import open_state, read_state, set_aside

RING = 128
STAMP_CAP = 1 << 20  # the ring plus one in-flight write's events; more is not a stamp


@dataclass(frozen=True)
class Journal:
    epoch: str
    seq: int
    recent: tuple[str, ...] = ()  # "seq:id,id" items, oldest first, kept encoded
    pending: str = ""  # the events of the write in flight (one JSON line), "" when none

    @property
    def stamp(self) -> str:
        return f"{self.epoch}:{self.seq}"

    def advance(self, ids: list[int]) -> Journal:
        """The journal after one more write touching `ids`."""
        seq = self.seq + 1
        item = f"{seq}:{','.join(str(i) for i in sorted(set(ids)))}"
        return Journal(self.epoch, seq, (*self.recent[-(RING - 1) :], item))

    def with_pending(self, pending: str) -> Journal:
        return replace(self, pending=pending)

    def changed_since(self, epoch: str, seq: int) -> set[int] | None:
        """Ids written after (epoch, seq), or None when the ring cannot tell (rescan)."""
        if epoch != self.epoch or seq > self.seq:
            return None
        if seq == self.seq:
            return set()
        entries = [_parse_item(item) for item in self.recent]
        if not entries or entries[0][0] > seq + 1:
            return None
        return {tid for s, ids in entries if s > seq for tid in ids}


def write_order(journal: Journal) -> dict[int, int]:
    """Task id -> the seq of its last write the ring remembers: the order the board
    committed its recent writes in (timestamps can tie; seqs cannot)."""
    order: dict[int, int] = {}
    for item in journal.recent:
        seq, ids = _parse_item(item)
        for tid in ids:
            order[tid] = seq
    return order


def _parse_item(item: str) -> tuple[int, list[int]]:
    seq, _, ids = item.partition(":")
    return int(seq), [int(i) for i in ids.split(",") if i]


def new_journal() -> Journal:
    return Journal(secrets.token_hex(4), 0, ())


def read_stamp(path: Path) -> str:
    """Line 1 of the stamp file ("" when there is none): one small read, no parsing."""
    try:
        fd = open_state(path, os.O_RDONLY)
    except FileNotFoundError:
        return ""
    except (OSError, StorageError):  # a link or FIFO is no stamp (the next write sets it aside)
        return "?"
    try:
        head = os.read(fd, 64)
    except OSError:
        return "?"
    finally:
        os.close(fd)
    return head.split(b"\n", 1)[0].decode("ascii", "replace")


def read_journal(path: Path) -> Journal | None:
    """The whole stamp file, or None when it is missing or unreadable."""
    try:
        data = read_state(path, STAMP_CAP)
        text = data.decode("utf-8") if data is not None else ""
    except (OSError, StorageError, UnicodeDecodeError):  # unusable: treated as missing
        return None
    if not text.endswith("\n"):
        return None
    head, ring, pending, *rest = [*text.split("\n")[:-1], "", "", ""]
    try:
        epoch, seq_text = head.split(":")
        recent = tuple(ring.split())
        for item in recent:
            _parse_item(item)
        if not epoch or any(rest):
            return None
        return Journal(epoch, int(seq_text), recent, pending.strip())
    except ValueError:
        return None


def write_journal(path: Path, journal: Journal) -> None:
    """Rewrite the stamp file in place (see overwrite_small)."""
    body = " ".join(journal.recent)
    pending = f"{journal.pending}\n" if journal.pending else ""
    overwrite_small(path, f"{journal.stamp}\n{body}\n{pending}".encode())


def overwrite_small(path: Path, data: bytes) -> None:
    """Overwrite a small bookkeeping file in place: one pwrite, no rename, no fsync.

    A rename over an existing file makes ext4 flush the new data (~1 ms); an in-place write
    costs microseconds. Readers of these files hold the board lock, except `read_stamp`, for
    which a torn first line only means "look again". A file left half-written by a power cut
    fails to parse and is treated as missing: a new epoch, so every reader rescans.
    """
    try:
        try:
            fd = open_state(path, os.O_RDWR | os.O_CREAT)
        except UnusableFile as exc:  # a link, FIFO or directory there: never written through
            if exc.path != path:
                raise
            set_aside(path, "unusable")
            fd = open_state(path, os.O_RDWR | os.O_CREAT | os.O_EXCL)
    except OSError as exc:
        raise StorageError(f"cannot open {path}: {exc.strerror or exc}") from exc
    try:
        if os.pwrite(fd, data, 0) != len(data):
            raise StorageError(f"short write to {path}")
        if os.fstat(fd).st_size != len(data):
            os.ftruncate(fd, len(data))
    except OSError as exc:
        raise StorageError(f"cannot write {path}: {exc.strerror or exc}") from exc
    finally:
        os.close(fd)
