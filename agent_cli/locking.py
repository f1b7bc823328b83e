"""StateLock: the one critical-section primitive of the .team/ stores, audit log and settings.

An in-process RLock plus a cross-process filelock on a lock file, taken in that order; a hung
holder surfaces as StorageError naming the lock file. (The board keeps its own variant in
board/lock.py, which adds a hand-over between threads for claim throughput.)
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import StorageError
from .fsutil import prepare_lock

if TYPE_CHECKING:
    from filelock import FileLock

LOCK_TIMEOUT_S = 30.0


class StateLock:
    """An in-process RLock plus a cross-process filelock on `path`, taken in that order.

    Reentrant within a thread. Hold it only to re-read, check and write: never across a
    model call, a tool run or an approval. A lock held by a hung process for longer than
    `timeout` raises StorageError naming the lock file instead of hanging forever.
    """

    def __init__(self, path: Path, timeout: float = LOCK_TIMEOUT_S) -> None:
        self.path = Path(path)
        self._thread_lock = threading.RLock()
        self._file_lock: FileLock | None = None  # made at first use (filelock loads then)
        self._timeout = timeout

    @contextmanager
    def held(self) -> Iterator[None]:
        with self._thread_lock:
            from filelock import FileLock, Timeout

            if self._file_lock is None:
                self._file_lock = FileLock(str(self.path), thread_local=False)
            try:
                prepare_lock(self.path)  # no link, FIFO or directory where the lock goes
                self._file_lock.acquire(timeout=self._timeout)
            except Timeout as exc:
                raise StorageError(
                    f"timed out after {self._timeout:g}s waiting for lock {self.path}"
                ) from exc
            except OSError as exc:
                raise StorageError(f"cannot lock {self.path}: {exc.strerror or exc}") from exc
            try:
                yield
            finally:
                self._file_lock.release()
