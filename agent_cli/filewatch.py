"""FileWatcher: wakes the runtime's ChangeSignal when another process changes the board or an
inbox, so idle teammates wait on a condition instead of re-checking disk stamps every 50 ms.

On Linux it is one thread blocked in select() on an inotify descriptor (inotify_simple)
watching `.tasks/` (the `.stamp` every board write rewrites) and `.team/inbox/` (appends to
`<name>.jsonl`), plus the workdir and `.team/` only to notice those directories appear.
Directories are watched with IN_DONT_FOLLOW | IN_ONLYDIR: a symlink planted there is not
watched through. Elsewhere, or when inotify is unavailable (limits reached), `start()`
returns False and waiters keep the short re-check interval.
"""

from __future__ import annotations

import logging
import os
import select
import sys
import threading
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger(__name__)


class FileWatcher:
    def __init__(self, workdir: Path, on_change: Callable[[], None]) -> None:
        self.workdir = Path(workdir)
        self._on_change = on_change
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._pipe: tuple[int, int] | None = None
        self._wds: dict[int, str] = {}  # watch descriptor -> "root" | ".tasks" | ".team" | "inbox"
        self.active = False

    def start(self) -> bool:
        """Start watching (idempotent); False when no watcher can run here."""
        with self._lock:
            if self._thread is not None:
                return self.active
            if not sys.platform.startswith("linux"):
                self._thread = threading.current_thread()  # never again
                return False
            try:
                import inotify_simple

                self._inotify = inotify_simple.INotify()
            except (ImportError, OSError) as exc:  # e.g. max_user_instances reached
                log.info("no file watcher (%s): polling for other processes' changes", exc)
                self._thread = threading.current_thread()
                return False
            self._flags = inotify_simple.flags
            self._pipe = os.pipe()
            self._add("root", self.workdir)
            self._thread = threading.Thread(target=self._run, name="file-watch", daemon=True)
            self.active = True
            self._thread.start()
            return True

    def close(self) -> None:
        with self._lock:
            thread, pipe = self._thread, self._pipe
            if pipe is None or thread is None:
                return
            self._pipe = None
            os.write(pipe[1], b"x")
        thread.join(5.0)
        self.active = False
        for fd in pipe:
            os.close(fd)
        self._inotify.close()

    # ----- the watching thread --------------------------------------------------------
    def _add(self, role: str, path: Path) -> None:
        f = self._flags
        mask = f.CREATE | f.MOVED_TO | f.DONT_FOLLOW | f.ONLYDIR
        if role in (".tasks", "inbox"):
            mask |= f.MODIFY | f.CLOSE_WRITE
        try:
            wd = self._inotify.add_watch(os.fspath(path), mask)
        except OSError:
            return  # absent (it is added when it appears) or a symlink: not watched
        self._wds[wd] = role
        children = {"root": (".tasks", ".team"), ".team": ("inbox",)}.get(role, ())
        for child in children:
            base = self.workdir if role == "root" else self.workdir / ".team"
            self._add(child, base / child)

    def _run(self) -> None:
        pipe = self._pipe
        assert pipe is not None
        fd = self._inotify.fileno()
        while True:
            ready, _, _ = select.select([fd, pipe[0]], [], [])
            if pipe[0] in ready:
                return
            try:
                events = self._inotify.read(timeout=0)
            except OSError:
                return
            if any(self._relevant(event) for event in events):
                self._on_change()

    def _relevant(self, event: object) -> bool:
        wd, mask, name = event.wd, event.mask, event.name  # type: ignore[attr-defined]
        role = self._wds.get(wd)
        if mask & self._flags.IGNORED:
            self._wds.pop(wd, None)
            return False
        if role == "root" and name in (".tasks", ".team"):
            self._add(name, self.workdir / name)
            return True
        if role == ".team" and name == "inbox":
            self._add("inbox", self.workdir / ".team" / "inbox")
            return True
        if role == ".tasks":
            return name == ".stamp"
        if role == "inbox":
            return name.endswith(".jsonl") and not name.endswith(".quarantine.jsonl")
        return False
