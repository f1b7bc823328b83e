"""Which inbox messages an agent has taken into its conversation, durably.

The host hands an agent messages at least once; `Delivered` makes that exactly once in
effect. Ids handed over for the next user turn are *pending*; the transcript record that
carries that turn also carries them (`delivered`), so a message is marked delivered in the
same line that puts it in the conversation. A redelivery after any crash is then dropped, in
this process or the next one that restores the transcript. `on_commit` callbacks (the
acknowledgement of the inbox cursor) run once that record is written.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from pathlib import Path


class Delivered:
    """Thread-safe: the agent's turn thread commits, other threads ask `in`."""

    def __init__(self) -> None:
        self._ids: set[str] = set()
        self._pending: list[str] = []
        self._callbacks: list[Callable[[], None]] = []
        self._lock = threading.Lock()

    def __contains__(self, msg_id: object) -> bool:
        with self._lock:
            return msg_id in self._ids or msg_id in self._pending

    def add_pending(self, ids: Iterable[str], on_commit: Callable[[], None] | None = None) -> None:
        """These ids go into the agent's next user turn (and its transcript record)."""
        with self._lock:
            self._pending.extend(i for i in ids if i not in self._pending)
            if on_commit is not None:
                self._callbacks.append(on_commit)

    def take_pending(self) -> list[str]:
        with self._lock:
            return list(self._pending)

    def commit(self, ids: list[str]) -> None:
        """The record carrying `ids` was written (or could not be): they are delivered."""
        with self._lock:
            self._ids.update(ids)
            self._pending = [i for i in self._pending if i not in ids]
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()

    def mark(self, ids: Iterable[str]) -> None:
        """Delivered without a user turn (the host handled them)."""
        with self._lock:
            self._ids.update(ids)

    def load(self, path: Path) -> None:
        """Add the ids recorded in a transcript (every record, compactions notwithstanding)."""
        from .transcript import read_records

        found: set[str] = set()
        for record in read_records(path)[0]:
            ids = record.get("delivered")
            if isinstance(ids, list):
                found.update(i for i in ids if isinstance(i, str))
        with self._lock:
            self._ids |= found
