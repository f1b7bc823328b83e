"""The parsed-task cache behind TaskBoard: re-parsing 10,000 files per claim is too slow.

The cache remembers, per task file, the parsed Task (or the Problem that stops it parsing),
the file's (mtime_ns, size, inode) signature and when it was read. `refresh` brings it up to
date with what any process wrote, and is only called under the board lock:

- stamp unchanged since the last refresh -> nothing to do;
- the stamp's journal lists what changed -> re-read exactly those files;
- otherwise (new epoch, journal too short, periodic check) -> rescan the directory and re-read
  files whose signature changed. A signature is trusted only when the file's mtime is well
  before the moment it was read ("racy" check, as git does): inode numbers are reused at once
  and mtimes are coarse, so a quick rewrite can look unchanged otherwise.
"""

from __future__ import annotations

import bisect
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..errors import UnusableFile
from ..fsutil import JSON_CAP, open_at, open_dir, open_state, read_fd
from .journal import Journal, read_journal, read_stamp
from .leases import LeaseIndex
from .models import Problem, Task, parse_task
from .presence import TASK_FILE_RE

RACY_NS = 50_000_000  # a signature is trusted once the file is this much older than the read
FULL_RESCAN_NS = 5_000_000_000  # rescan the directory at least this often (hand edits)

TASK_CAP = JSON_CAP  # a task file larger than this is reported, never read whole
Sig = tuple[int, int, int]


def task_file(tasks_dir: Path, task_id: int) -> Path:
    return tasks_dir / f"task_{task_id}.json"


def id_of_name(name: str) -> int | None:
    """The id a task file name claims (`task_12.json` -> 12), None when it is not a number."""
    m = TASK_FILE_RE.match(name)
    if not m or not m.group(1).isdigit() or m.group(1).startswith("0"):
        return None
    return int(m.group(1))


def sig_of(st: os.stat_result) -> Sig:
    return (st.st_mtime_ns, st.st_size, st.st_ino)


@dataclass(frozen=True)
class Entry:
    sig: Sig
    read_ns: int
    task: Task | None
    problem: Problem | None


class TaskCache:
    """Parsed tasks keyed by file name. Not thread-safe by itself: the board lock guards it."""

    def __init__(self, tasks_dir: Path) -> None:
        self.dir = tasks_dir
        self._dir_text = os.fspath(tasks_dir)
        self.entries: dict[str, Entry] = {}
        self.journal: Journal | None = None  # the stamp file the entries reflect
        self.stamp = ""  # journal.stamp, "" when unknown
        self.version = 0  # bumped whenever an entry changes
        self._last_full_ns = 0
        self.tasks: dict[int, Task] = {}  # kept in step with entries
        self._ids: list[int] | None = None
        self._held: dict[str, set[int]] = {}  # owner -> ids of their in_progress tasks
        self.pending: list[int] = []  # sorted ids of pending tasks: claim_next looks only here
        self.leases = LeaseIndex()  # expiry instants of the in_progress tasks

    @property
    def sorted_ids(self) -> list[int]:
        if self._ids is None:
            self._ids = sorted(self.tasks)
        return self._ids

    def held_by(self, owner: str) -> list[Task]:
        """The owner's in_progress tasks (more than one only on a damaged board)."""
        return [self.tasks[i] for i in sorted(self._held.get(owner, ()))]

    def holder_names(self) -> list[str]:
        """Owners holding at least one in_progress task (no Task lists built)."""
        return [o for o, ids in self._held.items() if ids]

    def holders(self) -> dict[str, list[Task]]:
        return {o: self.held_by(o) for o in sorted(self._held) if self._held[o]}

    def corrupt_ids(self) -> set[int]:
        return {
            e.problem.task_id
            for e in self.entries.values()
            if e.problem and e.problem.task_id is not None
        }

    def problems(self) -> list[Problem]:
        found = [e.problem for e in self.entries.values() if e.problem]
        return sorted(found, key=lambda p: (p.task_id or 0, p.path))

    def max_file_id(self) -> int:
        ids = [id_of_name(n) for n in self.entries]
        return max((i for i in ids if i is not None), default=0)

    # ----- keeping up with the disk -----
    def refresh(self, stamp_path: Path, force_full: bool = False) -> None:
        """Bring the cache up to date with the disk (caller holds the board lock)."""
        now = time.time_ns()
        due = force_full or now - self._last_full_ns > FULL_RESCAN_NS
        stamp = read_stamp(stamp_path)
        if stamp and stamp == self.stamp and not due:
            return
        journal = read_journal(stamp_path)
        changed = None
        if journal is not None and self.journal is not None and not due:
            changed = journal.changed_since(self.journal.epoch, self.journal.seq)
        if changed is None:
            self._full_scan()
        else:
            with _closing(open_dir(self.dir)) as dir_fd:
                for tid in sorted(changed):
                    self._reread(f"task_{tid}.json", dir_fd)
        self.journal = journal
        self.stamp = journal.stamp if journal else ""

    def put(self, task: Task, before_ns: int) -> None:
        """Record a task this process just wrote (caller holds the lock)."""
        name = f"task_{task.id}.json"
        try:
            sig = sig_of(os.stat(os.path.join(self._dir_text, name)))
        except OSError:
            sig = (0, 0, 0)
        self._set(name, Entry(sig, before_ns, task, None))

    def seen(self, journal: Journal) -> None:
        """The entries now reflect `journal` (after this process's own write)."""
        self.journal = journal
        self.stamp = journal.stamp

    def invalidate(self) -> None:
        self.journal = None
        self.stamp = ""
        self._last_full_ns = 0

    def _full_scan(self) -> None:
        started = time.time_ns()
        present: set[str] = set()
        try:
            dir_fd = open_dir(self.dir)  # .tasks itself a link: UnusableFile naming it
        except FileNotFoundError:
            dir_fd = None
        if dir_fd is not None:
            with _closing(dir_fd), os.scandir(dir_fd) as it:
                for de in it:
                    if not TASK_FILE_RE.match(de.name):
                        continue
                    present.add(de.name)
                    old = self.entries.get(de.name)
                    if old is None:
                        self._reread(de.name, dir_fd)
                        continue
                    try:
                        sig = sig_of(de.stat(follow_symlinks=False))
                    except OSError:
                        sig = None
                    if sig == old.sig and sig[0] + RACY_NS < old.read_ns:
                        continue
                    self._reread(de.name, dir_fd)
        for gone in set(self.entries) - present:
            self._drop(gone)
        self._last_full_ns = started

    def _reread(self, name: str, dir_fd: int | None = None) -> None:
        """Parse one task file, opened through `dir_fd` (the .tasks directory) when given."""
        path = os.path.join(self._dir_text, name)
        read_ns = time.time_ns()
        tid = id_of_name(name)
        try:
            if dir_fd is None:
                fd = open_state(Path(path), os.O_RDONLY)  # no link, FIFO or device, anywhere
            else:
                fd = open_at(dir_fd, name, os.O_RDONLY, shown=path)
        except FileNotFoundError:
            self._drop(name)
            return
        except UnusableFile as exc:
            self._set(name, Entry((0, 0, 0), read_ns, None, _problem(path, tid, exc.detail)))
            return
        except OSError as exc:
            self._set(name, Entry((0, 0, 0), read_ns, None, _problem(path, tid, exc)))
            return
        try:
            st = os.fstat(fd)
            try:
                if tid is None:
                    raise ValueError("file name is not task_<id>.json with a positive id")
                task = parse_task(read_fd(fd, TASK_CAP, path), tid)
            except UnusableFile as exc:  # over its size cap: never read whole
                self._set(name, Entry(sig_of(st), read_ns, None, _problem(path, tid, exc.detail)))
                return
            except (OSError, ValueError) as exc:
                self._set(name, Entry(sig_of(st), read_ns, None, _problem(path, tid, exc)))
                return
        finally:
            os.close(fd)
        self._set(name, Entry(sig_of(st), read_ns, task, None))

    def _set(self, name: str, entry: Entry) -> None:
        old = self.entries.get(name)
        self.entries[name] = entry
        if old is not None and old.task == entry.task and old.problem == entry.problem:
            return
        self._forget(old.task if old else None, keep_id=entry.task is not None)
        task = entry.task
        if task is not None:
            if task.id not in self.tasks:
                self._ids = None
            self.tasks[task.id] = task
            if task.status == "in_progress" and task.owner:
                self._held.setdefault(task.owner, set()).add(task.id)
            elif task.status == "pending":
                bisect.insort(self.pending, task.id)
            self.leases.update(task)
        self.version += 1

    def _drop(self, name: str) -> None:
        old = self.entries.pop(name, None)
        if old is not None:
            self._forget(old.task, keep_id=False)
            self.version += 1

    def _forget(self, task: Task | None, keep_id: bool) -> None:
        if task is None:
            return
        self.leases.discard(task.id)
        if task.owner in self._held:
            self._held[task.owner].discard(task.id)
        if task.status == "pending":
            at = bisect.bisect_left(self.pending, task.id)
            if at < len(self.pending) and self.pending[at] == task.id:
                del self.pending[at]
        if not keep_id and self.tasks.pop(task.id, None) is not None:
            self._ids = None


@contextmanager
def _closing(fd: int) -> Iterator[int]:
    try:
        yield fd
    finally:
        os.close(fd)


def _problem(path: str, tid: int | None, why: object) -> Problem:
    detail = why.strerror if isinstance(why, OSError) and why.strerror else why
    return Problem(path=path, task_id=tid, message=str(detail))
