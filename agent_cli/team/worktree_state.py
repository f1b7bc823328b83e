"""`worktrees.json` in the host-private directory (private_state.py: inside the git
directory, never in a file a clone can bring): where each task lives, for every process and
a resumed run.

One record per task id: `path` and `branch` of its worktree, `status` (active: a worktree
holds its work; refused: the last landing was refused, `detail` says why; landed: its change
is in the main tree, `files` lists them; pushed: completed on this host and pushed for
another host to land, `detail` says where), `base` (the main-tree snapshot its branch last
merged), `merged` (the commit that landed), `owner` and `updated_at`. Written under a lock,
atomically; a file that does not parse is set aside and the records start afresh (git still
has every worktree and branch).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..fsutil import atomic_write_json, ensure_dir, utc_now
from ..locking import StateLock
from . import set_aside

MAX_BYTES = 8_000_000


class WorktreeState:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = StateLock(Path(str(path) + ".lock"))

    def _read(self) -> dict[str, dict[str, Any]]:
        try:
            if self.path.is_symlink() or (
                self.path.exists() and not self.path.is_file()
            ) or (self.path.exists() and self.path.stat().st_size > MAX_BYTES):
                set_aside(self.path)
                return {}
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            set_aside(self.path)
            return {}
        tasks = data.get("tasks") if isinstance(data, dict) else None
        if not isinstance(tasks, dict):
            return {}
        return {k: v for k, v in tasks.items() if isinstance(v, dict)}

    def all(self) -> dict[int, dict[str, Any]]:
        """Every record by task id (an empty dict when there is no file)."""
        with self._lock.held():
            return {int(k): v for k, v in self._read().items() if k.isdigit()}

    def get(self, task_id: int) -> dict[str, Any] | None:
        return self.all().get(task_id)

    def update(self, task_id: int, **fields: Any) -> dict[str, Any]:
        """Merge `fields` into the task's record (created when missing); returns it."""
        with self._lock.held():
            tasks = self._read()
            rec = tasks.setdefault(str(task_id), {})
            rec.update(fields)
            rec["updated_at"] = utc_now()
            ensure_dir(self.path.parent)
            atomic_write_json(self.path, {"tasks": tasks})
            return dict(rec)

    def drop(self, task_id: int) -> None:
        with self._lock.held():
            tasks = self._read()
            if tasks.pop(str(task_id), None) is not None:
                atomic_write_json(self.path, {"tasks": tasks})
