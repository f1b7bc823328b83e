"""The team's shared state under .team/ and the teammate threads that use it.

State stores (each testable alone, built from a plain path): `mailbox` (JSONL inboxes with
acknowledged cursors), `roster` (config.json), `protocol` (requests.json). `manager` and
`teammate` run the threads. This module only holds what every store shares: `StateLock` and
`set_aside`; it imports no submodule, so importing the package stays cheap and cycle-free.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from ..errors import StorageError
from ..fsutil import utc_now

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
        self._file_lock = FileLock(str(self.path), thread_local=False)
        self._timeout = timeout

    @contextmanager
    def held(self) -> Iterator[None]:
        with self._thread_lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            try:
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


def set_aside(path: Path) -> Path | None:
    """Rename a corrupt state file to `<name>.corrupt-<utc stamp>` (never delete it).

    Returns the new path, or None if `path` did not exist.
    """
    stamp = utc_now().replace(":", "").replace("-", "")
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    try:
        os.replace(path, target)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StorageError(f"cannot set aside {path}: {exc.strerror or exc}") from exc
    return target
