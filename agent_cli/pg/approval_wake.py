"""A wake-up for the approval queue: one LISTEN connection in a thread of its own.

Each NOTIFY on the channel moves a generation counter and wakes whoever waits for it. The
connection is remade when the server drops it (backing off up to a few seconds), and the
counter moves after each reconnect too: what was notified meanwhile is re-read, never
assumed. Waiters also re-read on their own heartbeat, so a lost NOTIFY only costs time.
"""

from __future__ import annotations

import threading
from typing import Any

import psycopg
from psycopg import sql

from ..errors import StorageError
from .db import Database

RETRY_S = (0.1, 0.25, 0.5, 1.0, 2.0, 4.0)  # waits between reconnect attempts
LISTEN_SLICE_S = 0.5  # how often the listening thread looks at its stop flag


class Waker:
    """Wakes waiters on each NOTIFY on `channel` (and on `bump()`)."""

    def __init__(self, db: Database, channel: str) -> None:
        self.db = db
        self.channel = channel
        self.listening = threading.Event()  # set while a LISTEN connection is up
        self._cond = threading.Condition()
        self._gen = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._conn: psycopg.Connection | None = None

    def start(self) -> Waker:
        with self._cond:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, daemon=True,
                                                name=f"listen {self.channel}")
                self._thread.start()
        return self

    def generation(self) -> int:
        with self._cond:
            return self._gen

    def bump(self) -> None:
        with self._cond:
            self._gen += 1
            self._cond.notify_all()

    def wait(self, seen: int, timeout: float) -> int:
        """Block until the generation is no longer `seen` or `timeout` passes; the current
        generation."""
        with self._cond:
            self._cond.wait_for(lambda: self._gen != seen or self._stop.is_set(), timeout)
            return self._gen

    def close(self) -> None:
        self._stop.set()
        self.bump()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(LISTEN_SLICE_S * 4 + 5)

    def _run(self) -> None:
        failures = 0
        while not self._stop.is_set():
            try:
                self._listen()
                failures = 0
            except (psycopg.Error, StorageError, OSError):
                failures += 1
            finally:
                self.listening.clear()
                self._drop()
            self._stop.wait(RETRY_S[min(failures, len(RETRY_S) - 1)])

    def _listen(self) -> None:
        conn = self._conn = self.db.connect()
        conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self.channel)))
        self.listening.set()
        self.bump()  # whatever was notified while no one listened: look again
        while not self._stop.is_set():
            for _ in conn.notifies(timeout=LISTEN_SLICE_S):
                self.bump()

    def _drop(self) -> None:
        conn: Any = self._conn
        self._conn = None
        if conn is not None:
            try:
                conn.close()
            except psycopg.Error:
                pass
