"""StatusWriter: records teammates' status in the roster without slowing their wake-up.

A roster write is an fsync'd atomic replace under a file lock (several ms). A teammate that
wakes for a message must reach its model call within a few ms, so its "working" status is
posted here and written by a writer thread while the model runs (the thread ends after a
few idle seconds); other changes are written before the caller goes on (`post(wait=True)`).
Writes happen in order and the latest fields win, so a slow write never overwrites a newer
status.

A member the roster lost (config.json was corrupt and set aside, so the roster starts empty)
is registered again, with everything last written for it, by the next write of any member:
the live team never disappears from `agent-cli team` or from send_message's checks.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import AgentCliError, NotFound

if TYPE_CHECKING:
    from .roster import Roster


class StatusWriter:
    IDLE_EXIT_S = 5.0  # the writer thread ends after this long with nothing to write

    def __init__(self, roster: Roster, on_error: Callable[[str], None]) -> None:
        self._roster = roster
        self._on_error = on_error
        self._cond = threading.Condition()
        self._pending: dict[str, dict[str, Any]] = {}
        self._busy = False  # a batch is being written
        self._thread: threading.Thread | None = None
        self._identity: dict[str, dict[str, Any]] = {}  # name -> role, model, require_plan
        self._written: dict[str, dict[str, Any]] = {}  # name -> every field written so far

    def register(self, name: str, role: str, model: str | None, require_plan: bool) -> None:
        """Who `name` is, so it can be re-added if the roster loses it."""
        with self._cond:
            self._identity[name] = {"role": role, "model": model, "require_plan": require_plan}

    def post(self, name: str, wait: bool = False, **fields: Any) -> None:
        """Queue `fields` for `name`'s roster entry; with wait=True return once written."""
        with self._cond:
            self._pending.setdefault(name, {}).update(fields)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="roster-writer", daemon=True)
                self._thread.start()
            self._cond.notify_all()
        if wait:
            self.flush()

    def flush(self, timeout: float | None = None) -> bool:
        """Block until everything posted so far is written (False on timeout)."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._pending and not self._busy, timeout)

    def _run(self) -> None:
        while True:
            with self._cond:
                if not self._pending:
                    self._cond.wait(self.IDLE_EXIT_S)
                if not self._pending:
                    self._thread = None
                    return
                batch, self._pending = self._pending, {}
                self._busy = True
            for name, fields in batch.items():
                self._write(name, fields)
            with self._cond:
                self._busy = False
                self._cond.notify_all()

    def _write(self, name: str, fields: dict[str, Any]) -> None:
        try:
            try:
                self._roster.update(name, **fields)
            except NotFound:
                if not self._restore():
                    raise
                self._roster.update(name, **fields)
            with self._cond:
                self._written.setdefault(name, {}).update(fields)
        except AgentCliError as exc:
            self._on_error(f"cannot record {name}'s status: {exc}")
        except Exception as exc:  # never leave flush() waiting on a dead writer
            self._on_error(f"cannot record {name}'s status: {type(exc).__name__}: {exc}")

    def _restore(self) -> bool:
        """Re-add every registered member missing from the roster; False if none was."""
        with self._cond:
            known = {
                n: (dict(i), dict(self._written.get(n, {}))) for n, i in self._identity.items()
            }
        present = {m.name for m in self._roster.members()}
        missing = [n for n in known if n not in present]
        for name in missing:
            identity, written = known[name]
            self._roster.add(name, **identity)
            if written:
                self._roster.update(name, **written)
            self._on_error(f"{name} was missing from the roster; registered again")
        return bool(missing)
