"""ChangeSignal: how a waiting teammate is woken at once by an in-process send or board change.

Writers call `notify()` after a change; a waiter remembers `generation` before checking for
work and then `wait(since, timeout)`s. Changes made by other processes are not signalled: the
waiter's bounded timeout makes it re-check cheap on-disk stamps (board stamp, inbox size).
"""

from __future__ import annotations

import threading


class ChangeSignal:
    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._gen = 0

    @property
    def generation(self) -> int:
        with self._cond:
            return self._gen

    def notify(self) -> None:
        with self._cond:
            self._gen += 1
            self._cond.notify_all()

    def wait(self, since: int, timeout: float) -> int:
        """Block until generation != since or timeout; return the current generation."""
        with self._cond:
            if self._gen == since:
                self._cond.wait(timeout)
            return self._gen
