"""The board's critical section: both locks, the cache brought up to date, write-ahead writes.

`Section.locked()` holds lock.BoardLock (an in-process RLock plus the cross-process file lock
on `.tasks/.lock`), refreshes the parsed cache, appends the events of a writer that died
halfway, and takes back the leases that ran out. `Section.write()` bumps the change stamp
(write-ahead, carrying the write's event records), writes the task files atomically, appends
to `events.jsonl`, then drops the records from the stamp. Each record written becomes a
TaskEvent (announce.py), queued before the outermost lock is released (notify.py: told in
commit order); then the section calls `on_change` and delivers the queue to `on_event`, so no
board action can forget its notification.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from ..errors import StorageError
from ..events import TaskEvent
from ..fsutil import atomic_write_json
from .announce import announcement
from .cache import TaskCache, task_file
from .eventlog import append_event, landed_events, missing_from_log, pending_line, with_ids
from .journal import new_journal, write_journal
from .leases import Expiry, Leases, iso_ms, taken_back
from .lock import BoardLock
from .models import Task
from .notify import OrderedNotices

log = logging.getLogger(__name__)


class Section:
    """The locked, journaled store under one board (see the module docstring)."""

    def __init__(
        self,
        tasks_dir: Path,
        leases: Leases,
        on_change: Callable[[], None] | None,
        on_event: Callable[[TaskEvent], None] | None,
    ) -> None:
        self.dir = tasks_dir
        self.leases = leases
        self.cache = TaskCache(tasks_dir)
        self.stamp_path = tasks_dir / ".stamp"
        self.events_path = tasks_dir / "events.jsonl"
        self._lock = BoardLock(tasks_dir / ".lock")
        self._on_change = on_change
        self._notices = OrderedNotices(on_event)
        self._outbox: list[TaskEvent] = []  # this section's writes, queued at the lock's end
        self._expired: list[Expiry] = []  # taken back by this instance, see take_expired()

    @contextmanager
    def locked(self, *, create: bool = False) -> Iterator[bool]:
        """Hold both locks with the cache up to date; yields False when there is no board yet.
        Leases that ran out are taken back first (one write), whoever asks."""
        sent: list[TaskEvent] = []
        self._lock.enter()
        try:
            if not self._prepare(create):
                self.cache = TaskCache(self.dir)
                yield False
                return
            yield True
        finally:
            if self._lock.depth == 1:  # the outermost section: its writes are announced
                sent, self._outbox = self._outbox, []
                self._notices.enqueue(sent)  # still locked: the queue keeps commit order
            self._lock.leave()
            if sent:
                self._announce()

    def _prepare(self, create: bool) -> bool:
        """Lock the file, refresh the cache, settle a dead writer, sweep leases; False when
        there is no board directory (and `create` is False)."""
        if not self.dir.is_dir():
            if not create:
                return False
            try:
                self.dir.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StorageError(f"cannot create {self.dir}: {exc.strerror}") from exc
        handed_over = self._lock.lock_file()
        if self._lock.depth == 1 and not (handed_over and self.cache.stamp):
            # a lock handed over by a thread of this process: no one else wrote since
            self.cache.refresh(self.stamp_path)
            journal = self.cache.journal
            if journal is not None and journal.pending and self._lock.file_held:
                self._settle_pending()
        if self._lock.depth == 1 and self._lock.file_held:
            self._expire_due()
        return True

    def write(self, tasks: list[Task], events: list[dict[str, Any]], detail: str = "") -> None:
        """Write `tasks` and their events (caller holds the lock). `detail`, when given, is
        what their notifications say instead of the records' own (e.g. "auto-claimed")."""
        journal = (self.cache.journal or new_journal()).advance([t.id for t in tasks])
        records = with_ids(journal.stamp, events)
        try:
            # before any task file (write-ahead), with the events in case we die halfway
            write_journal(self.stamp_path, journal.with_pending(pending_line(records, tasks)))
            for task in tasks:
                before = time.time_ns()
                atomic_write_json(task_file(self.dir, task.id), task.to_json())
                self.cache.put(task, before)
            for record in records:
                append_event(self.events_path, record)
            write_journal(self.stamp_path, journal)  # done: nothing pending
        except BaseException:
            self.cache.invalidate()
            raise
        self.cache.seen(journal)
        by_id = {t.id: t for t in tasks}
        self._outbox.extend(announcement(r, by_id.get(r["task_id"]), detail) for r in events)

    def notice(self, event: TaskEvent) -> None:
        """Send a notification that is not a change (nothing written, nothing logged)."""
        self._notices.enqueue([event])
        self._notices.flush()

    def notices_held(self) -> AbstractContextManager[None]:
        """This thread's notifications, and every one committed after them, wait until the
        block ends (on_change does not)."""
        return self._notices.held()

    def _announce(self) -> None:
        if self._on_change is not None:
            self._on_change()
        self._notices.flush()

    def _settle_pending(self) -> None:
        """A write died between its stamp and its last event append (the stamp still carries
        its records): append those whose task write landed and that the log lacks, then drop
        them from the stamp. Never fails a read: a disk error leaves them for the next try."""
        journal = self.cache.journal
        assert journal is not None
        try:
            try:
                landed = landed_events(journal.pending, self.cache.tasks.get)
            except ValueError as exc:  # nothing usable: drop it rather than retry forever
                log.warning("%s: unreadable pending events dropped: %s", self.stamp_path, exc)
                landed = []
            for record in missing_from_log(self.events_path, landed):
                append_event(self.events_path, record)
            settled = journal.with_pending("")
            write_journal(self.stamp_path, settled)
        except (StorageError, OSError) as exc:
            log.warning("cannot append the events of an interrupted write: %s", exc)
            return
        self.cache.seen(settled)

    def _expire_due(self) -> None:
        """Take back every lease that ran out or whose owner's process is gone, in one write
        (caller holds the lock). A disk error leaves them for the next operation."""
        cache = self.cache
        due = self.leases.due(cache.leases, cache.tasks, cache.holder_names(), cache.held_by)
        if not due:
            return
        back, events = taken_back(due, cache.tasks, iso_ms(self.leases.now_ms()))
        try:
            for exp in due:
                self.leases.note("x", exp.token, exp.task_id)
            self.write(back, events)
        except StorageError as exc:
            log.warning("cannot take back expired leases: %s", exc)
            return
        self._expired.extend(due)

    def take_expired(self) -> list[Expiry]:
        """The leases this section took back (caller holds the lock) since the last call."""
        taken, self._expired = self._expired, []
        return taken
