"""ClaimGate: lets a closing team stop automatic claims for everyone at once.

Team.shutdown_all closes it before sending any shutdown request, so a task one teammate
releases on its way out is never picked up by another teammate that is itself about to stop.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

CLOSING = "the team is shutting down: no new claims"


class ClaimGate:
    """Open while the team runs; `close()` stops new automatic claims and waits for the
    claims already under way, so none lands after it returns."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._open = True
        self._active = 0

    @contextmanager
    def attempt(self) -> Iterator[bool]:
        """Yields True (and counts the attempt) while open, False once closed."""
        with self._cond:
            allowed = self._open
            if allowed:
                self._active += 1
        try:
            yield allowed
        finally:
            if allowed:
                with self._cond:
                    self._active -= 1
                    self._cond.notify_all()

    def close(self, timeout: float) -> bool:
        """Refuse new attempts; True once no attempt is in progress (False on timeout)."""
        with self._cond:
            self._open = False
            return self._cond.wait_for(lambda: self._active == 0, timeout)

    @property
    def is_open(self) -> bool:
        return self._open

    def reopen(self) -> None:
        with self._cond:
            self._open = True
