"""LeaseRenewer: keeps the leases of this process's live agents from running out.

One `lease-renewer` thread per Team renews, every third of the lease, the leases held by the
teammates whose threads are alive (and the lead's): one small write under the board lock, with
no event and no wake-up, so nothing waits on it. A teammate stuck in a long tool run, an
approval wait or a retry backoff keeps its task; one whose thread ended (or whose process
was killed) stops being renewed, and its lease runs out. With `heartbeat` (a PostgreSQL
roster's), the same owners' heartbeats are renewed on each round too, at least every
`heartbeat_s`: other hosts tell this process's teammates are alive by them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..errors import AgentCliError

if TYPE_CHECKING:
    from ..board.models import Task
    from ..board.store import TaskBoard

MIN_INTERVAL_S = 0.01
HEARTBEAT_S = 15.0  # a third of the 45 s after which a silent member is gone


class LeaseRenewer:
    def __init__(
        self,
        board: TaskBoard,
        owners: Callable[[], list[str]],
        warn: Callable[[str], None],
        heartbeat: Callable[[list[str]], object] | None = None,
        heartbeat_s: float = HEARTBEAT_S,
    ) -> None:
        self._board = board
        self._owners = owners
        self._warn = warn
        self._heartbeat = heartbeat
        self._heartbeat_s = heartbeat_s
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._failing = False

    @property
    def interval_s(self) -> float:
        every = self._board.lease_s / 3
        if self._heartbeat is not None:
            every = min(every, self._heartbeat_s)
        return max(MIN_INTERVAL_S, every)

    def start(self) -> None:
        """Start the thread if it is not running (a spawn after a shutdown restarts it)."""
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                return
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name="lease-renewer", daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 1.0) -> None:
        with self._lock:
            thread, self._thread = self._thread, None
        self._stop.set()
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def renew_once(self) -> list[Task]:
        """Renew now; a storage error is reported once and retried next time."""
        owners = self._owners()
        if not owners:
            return []
        try:
            renewed = self._board.renew(owners)
            if self._heartbeat is not None:
                self._heartbeat(owners)
        except AgentCliError as exc:
            if not self._failing:
                what = "task leases" if self._heartbeat is None else "task leases or heartbeats"
                self._warn(f"cannot renew {what}: {exc}")
            self._failing = True
            return []
        self._failing = False
        return renewed

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.renew_once()
