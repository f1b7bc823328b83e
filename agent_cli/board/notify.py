"""The board's notifications, told in the order the board committed the changes.

Each write's TaskEvents join one queue while the board lock is still held, so the queue's
order is the commit order (the order of `events.jsonl`). After the lock is released the thread
delivers from the head of the queue. Delivery never waits for another thread: when one is
already delivering, it delivers the newcomer's events too (it looks again before it lets go),
so a subscriber that writes to the board, or waits for a thread that does, cannot deadlock.

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


@dataclass
class _Entry:
    event: TaskEvent
    held: bool


class OrderedNotices:
    """One board's notification queue (see the module docstring)."""

    def __init__(self, send: Callable[[TaskEvent], None] | None) -> None:
        self._send = send
        self._lock = threading.Lock()  # the queue and the delivering flag; never held to send
        self._queue: deque[_Entry] = deque()
        self._delivering = False
        self._local = threading.local()  # .held: this thread's held entries, or None

    def enqueue(self, events: Iterable[TaskEvent]) -> None:
        """Queue `events` in order (under the board lock for a change: commit order)."""
        mine = getattr(self._local, "held", None)
        with self._lock:
            for event in events:
                entry = _Entry(event, mine is not None)
                if mine is not None:
                    mine.append(entry)
                self._queue.append(entry)

    def flush(self) -> None:
        """Deliver from the head up to the first held entry, unless a thread does already."""
        while True:
            with self._lock:
                if self._delivering or not self._ready():
                    return
                self._delivering = True
            try:
                while True:
                    with self._lock:
                        if not self._ready():
                            break
                        entry = self._queue.popleft()
                    if self._send is not None:
                        self._send(entry.event)
            finally:
                with self._lock:
                    self._delivering = False

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
            with self._lock:
                for entry in mine:
                    entry.held = False
            self.flush()
