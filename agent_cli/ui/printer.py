"""Printer: the one place terminal output goes through, from any thread.

Writes whole blocks under a lock so lines from different threads never interleave. While an
approval is on screen the printer is paused: blocks are held back in order and written when
it resumes, so nothing is printed in the middle of a question.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import TextIO


class Printer:
    def __init__(self, file: Callable[[], TextIO] | TextIO | None = None) -> None:
        # A callable is resolved at each write: under patch_stdout sys.stdout changes.
        self._file = file
        self._lock = threading.Lock()
        self._paused = 0
        self._held: list[str] = []

    def _target(self) -> TextIO:
        if self._file is None:
            return sys.stdout
        if callable(self._file) and not hasattr(self._file, "write"):
            return self._file()
        return self._file  # type: ignore[return-value]

    def write(self, text: str, urgent: bool = False) -> None:
        """Write one block (a newline is added when missing). `urgent` ignores a pause: it
        is the approval itself being shown."""
        if not text:
            return
        if not text.endswith("\n"):
            text += "\n"
        with self._lock:
            if self._paused and not urgent:
                self._held.append(text)
                return
            out = self._target()
            out.write(text)
            out.flush()

    def pause(self) -> None:
        with self._lock:
            self._paused += 1

    def resume(self) -> None:
        """Undo one pause; at zero, write what was held back, in order."""
        with self._lock:
            self._paused = max(0, self._paused - 1)
            if self._paused or not self._held:
                return
            held, self._held = self._held, []
            out = self._target()
            out.write("".join(held))
            out.flush()

    @property
    def held(self) -> int:
        with self._lock:
            return len(self._held)
