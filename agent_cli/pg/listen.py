"""Listener: the team's NOTIFYs wake this process, as inotify does for a file board.

One LISTEN connection per process on the team's channel, read by one daemon thread blocked
in select() on that connection and a pipe: `notify()` (the runtime's ChangeSignal.notify) is
called once per batch of notifications. When the server goes away (restarted, the
connection terminated) the thread reconnects with a growing backoff and calls `notify()`
once it is back, since changes may have been missed meanwhile. `close()` writes to the pipe,
so the thread ends at once, even while it waits to reconnect.
"""

from __future__ import annotations

import logging
import os
import select
import threading
from collections.abc import Callable

import psycopg

from ..errors import StorageError
from ..storeset import scrub
from .db import Database

log = logging.getLogger(__name__)

BACKOFF_S = (0.05, 0.1, 0.2, 0.5, 1.0, 2.0)
PROBE_S = 30.0  # an idle LISTEN connection is probed this often (a silently dead link)


class Listener:
    def __init__(self, db: Database, notify: Callable[[], None]) -> None:
        self.db = db
        self._notify = notify
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._pipe: tuple[int, int] | None = None
        self._conn: psycopg.Connection | None = None
        self.connected = threading.Event()  # set while LISTENing (tests wait on it)
        self.reconnects = 0

    @property
    def active(self) -> bool:
        """True while LISTENing: waiters are woken; else they poll (Wakeups.active)."""
        return self.connected.is_set()

    def start(self) -> bool:
        """Start listening (idempotent); False when the first connection fails (the
        thread still runs and keeps trying)."""
        with self._lock:
            if self._thread is not None:
                return self.connected.is_set()
            self._pipe = os.pipe()
            first_ok = self._connect()
            self._thread = threading.Thread(target=self._run, name="pg-listen", daemon=True)
            self._thread.start()
            return first_ok

    def close(self, timeout: float = 5.0) -> None:
        with self._lock:
            thread, pipe = self._thread, self._pipe
            if thread is None or pipe is None:
                return
            self._pipe = None
            os.write(pipe[1], b"x")
        thread.join(timeout)
        for fd in pipe:
            os.close(fd)
        self._drop()

    # ---- the listening thread ------------------------------------------------------

    def _connect(self) -> bool:
        try:
            self._conn = self.db.listen_connection()
        except StorageError as exc:
            log.info("cannot LISTEN on %s: %s", self.db.channel, exc)
            self._conn = None
            return False
        self.connected.set()
        return True

    def _drop(self) -> None:
        self.connected.clear()
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except psycopg.Error:
                pass

    def _run(self) -> None:
        pipe = self._pipe
        assert pipe is not None
        attempt = 0
        while True:
            if self._conn is None:
                wait = BACKOFF_S[min(attempt, len(BACKOFF_S) - 1)]
                if select.select([pipe[0]], [], [], wait)[0]:
                    return
                attempt += 1
                if not self._connect():
                    continue
                self.reconnects += 1
                attempt = 0
                self._notify()  # changes made while we were away were never signalled
            if not self._wait(pipe[0]):
                return

    def _wait(self, stop_fd: int) -> bool:
        """One wait on the connection; False when closing. A dead connection is dropped
        (the caller reconnects)."""
        conn = self._conn
        assert conn is not None
        try:
            ready = select.select([conn.fileno(), stop_fd], [], [], PROBE_S)[0]
            if stop_fd in ready:
                return False
            if not ready:
                conn.execute("SELECT 1")
                return True
            if any(True for _ in conn.notifies(timeout=0)):
                self._notify()
            elif conn.closed or conn.broken:
                self._drop()
        except (psycopg.Error, OSError, ValueError) as exc:
            detail = str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)
            log.info("LISTEN connection on %s lost (%s); reconnecting", self.db.channel,
                     scrub(detail, self.db.url))
            self._drop()
        return True
