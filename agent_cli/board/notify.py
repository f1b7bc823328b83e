"""The board's notifications, told in the order the board committed the changes.

Each write's TaskEvents join one queue while the board lock is still held, so the queue's
order is the commit order (the order of `events.jsonl`). After the lock is released the thread
delivers from the head of the queue; when another thread is already delivering, that one
delivers the newcomer's events too (it looks again before it lets go), and the newcomer waits
until its own events have been told -- so what it does next (a status, a message) is never
told before its board change. That wait is bounded (a guard: no subscriber waits for a
thread that is waiting here), and the deliverer itself never waits.

A thread inside `held()` (a landing: "completed" is told once its worktree is gone) marks its
entries held: delivery stops at the first held entry, so nothing committed after it is told
before it. Without this, a teammate woken by a completion could claim the task it unblocked
and have its claim shown before the completion that allowed it.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from ..events import TaskEvent

OWN_WAIT_S = 5.0  # the longest a thread waits for its own notifications to be told


@dataclass
class _Entry:
    seq: int
    event: TaskEvent
    held: bool


class OrderedNotices:
    """One board's notification queue (see the module docstring)."""

    def __init__(self, send: Callable[[TaskEvent], None] | None) -> None:
        self._send = send
        self._cond = threading.Condition()  # the queue, the counters; never held to send
        self._queue: deque[_Entry] = deque()
        self._seq = 0  # the last entry queued
        self._told = 0  # the last entry told (entries are told in order)
        self._delivering = False
        self._local = threading.local()  # .held (entries), .last (seq), .delivering

    def enqueue(self, events: Iterable[TaskEvent]) -> None:
        """Queue `events` in order (under the board lock for a change: commit order)."""
        mine = getattr(self._local, "held", None)
        with self._cond:
            for event in events:
                self._seq += 1
                entry = _Entry(self._seq, event, mine is not None)
                if mine is not None:
                    mine.append(entry)
                self._queue.append(entry)
                self._local.last = self._seq

    def flush(self) -> None:
        """Tell what is ready, then wait until this thread's own entries have been told."""
        self._deliver()
        want = getattr(self._local, "last", 0)
        if getattr(self._local, "held", None) is not None or getattr(
                self._local, "delivering", False):
            return  # its entries are held, or it is the one telling them
        with self._cond:
            self._cond.wait_for(lambda: self._told >= want, OWN_WAIT_S)

    def _deliver(self) -> None:
        """Tell from the head up to the first held entry, unless a thread does already."""
        while True:
            with self._cond:
                if self._delivering or not self._ready():
                    return
                self._delivering = True
            self._local.delivering = True
            try:
                self._tell_ready()
            finally:
                self._local.delivering = False
                with self._cond:
                    self._delivering = False

    def _tell_ready(self) -> None:
        while True:
            with self._cond:
                if not self._ready():
                    return
                entry = self._queue.popleft()
            try:
                if self._send is not None:
                    self._send(entry.event)
            finally:
                with self._cond:
                    self._told = entry.seq
                    self._cond.notify_all()

    def _ready(self) -> bool:
        return bool(self._queue) and not self._queue[0].held

    @contextmanager
    def held(self) -> Iterator[None]:
        """This thread's notifications (and every later one) wait until the block ends."""
        if getattr(self._local, "held", None) is not None:
            yield  # already held by an outer block
            return
        self._local.held = []
        try:
            yield
        finally:
            mine, self._local.held = self._local.held, None
            with self._cond:
                for entry in mine:
                    entry.held = False
            self.flush()
