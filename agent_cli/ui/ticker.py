"""Ticker: redraws the prompt often only while something animates (the lead's spinner), and
sleeps on a condition otherwise, waking for a slow refresh (the toolbar catching up with
other processes' board changes). An idle REPL costs next to no CPU: no short poll anywhere.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class Ticker:
    def __init__(
        self,
        active: Callable[[], bool],
        redraw: Callable[[], None],
        interval: float = 0.3,
        idle_interval: float = 10.0,
    ) -> None:
        self._active = active
        self._redraw = redraw
        self.interval = interval
        self.idle_interval = idle_interval
        self._cond = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="prompt-ticker", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def poke(self) -> None:
        """Something changed (e.g. the lead became busy): re-decide how often to redraw."""
        with self._cond:
            self._cond.notify_all()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        if self._thread.is_alive():
            self._thread.join(2.0)

    def _run(self) -> None:
        while True:
            busy = self._active()
            with self._cond:
                if self._closed:
                    return
                self._cond.wait(self.interval if busy else self.idle_interval)
                if self._closed:
                    return
            self._redraw()
