"""BoardLock: the board's critical section, for threads and for processes.

An in-process RLock keeps this process's threads apart; a `filelock.FileLock` on
`.tasks/.lock` (one instance per board, shared by its threads) keeps other processes out.
When threads of this process queue for the board, the holder hands the file lock straight to
the next one instead of releasing it (at most MAX_HANDOFFS times in a row, then other
processes get their turn): that saves a file-lock round trip per claim when teammates contend.
"""

from __future__ import annotations

import errno
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import StorageError
from ..fsutil import prepare_lock

if TYPE_CHECKING:
    from filelock import FileLock

LOCK_TIMEOUT_S = 30.0
MAX_HANDOFFS = 16


class BoardLock:
    """enter() / lock_file() / leave(); reentrant in the holding thread."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._mutex = threading.RLock()
        self._flock: FileLock | None = None  # made at the first lock_file (filelock loads then)
        self._count_lock = threading.Lock()
        self._waiting = 0  # threads waiting in enter() (guarded by _count_lock)
        self.depth = 0  # nesting in the thread holding the mutex
        self._flock_held = False  # may outlive one critical section: see _release_or_hand_over
        self._handoffs = 0

    def enter(self) -> None:
        """Take the in-process lock (blocks while another thread of this process holds it)."""
        with self._count_lock:
            self._waiting += 1
        try:
            self._mutex.acquire()
        except BaseException:  # interrupted while waiting: do not strand a handed-over lock
            with self._count_lock:
                self._waiting -= 1
            with self._mutex:
                self.depth += 1
                self._release_or_hand_over()
            raise
        with self._count_lock:
            self._waiting -= 1
        self.depth += 1

    def lock_file(self) -> bool:
        """Make sure the file lock is held; True when it was handed over by a thread of this
        process (so no other process can have written since)."""
        if self._flock_held:
            return True
        self._flock_held = self._acquire_file_lock()
        self._handoffs = 0
        return False

    @property
    def file_held(self) -> bool:
        """The cross-process lock is held (not on a read-only filesystem)."""
        return self._flock_held

    def leave(self) -> None:
        self._release_or_hand_over()
        self._mutex.release()

    def _release_or_hand_over(self) -> None:
        self.depth -= 1
        if self.depth or not self._flock_held:
            return
        with self._count_lock:
            waiting = self._waiting
        if waiting and self._handoffs < MAX_HANDOFFS:
            self._handoffs += 1
            return
        self._flock_held = False
        assert self._flock is not None
        self._flock.release()

    def _acquire_file_lock(self) -> bool:
        """Take the cross-process lock; False on a read-only filesystem, where nobody can
        write, so reads go on without it (and writes fail with StorageError)."""
        from filelock import FileLock, Timeout

        if self._flock is None:
            self._flock = FileLock(
                str(self.path),
                timeout=LOCK_TIMEOUT_S,
                thread_local=False,  # the RLock already keeps this process's threads apart
                poll_interval=0.001,
                preserve_lock_file=True,
            )
        try:
            prepare_lock(self.path)  # no link, FIFO or directory where the lock goes
            self._flock.acquire()
        except Timeout:
            raise StorageError(
                f"{self.path} is held by another process for over {LOCK_TIMEOUT_S:.0f} s"
            ) from None
        except OSError as exc:
            if exc.errno == errno.EROFS:
                return False
            raise StorageError(f"cannot lock {self.path}: {exc.strerror or exc}") from exc
        return True
