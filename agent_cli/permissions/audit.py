"""The audit log: one JSON line per permission decision in `.team/audit.jsonl`.

Each line: ts, agent, tool, input (long strings truncated), decision (allow|deny), source
(the rule text, "mode acceptEdits", "plan", "human", "headless", ...), feedback. Appends are
whole lines under a thread lock plus a file lock, so threads and processes never interleave.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..fsutil import append_line, read_jsonl, utc_now
from ..locking import StateLock

MAX_STR = 500


def truncate(value: Any, limit: int = MAX_STR) -> Any:
    """A JSON-safe copy of `value` with every long string cut to `limit` characters."""
    if isinstance(value, str):
        return value if len(value) <= limit else value[:limit] + f"... [{len(value)} chars]"
    if isinstance(value, dict):
        return {str(k): truncate(v, limit) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [truncate(v, limit) for v in value]
    if value is None or isinstance(value, bool | int | float):
        return value
    return truncate(str(value), limit)


class AuditLog:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = StateLock(Path(str(self.path) + ".lock"))

    def record(self, **fields: Any) -> None:
        """Append one decision. Unknown fields are kept; `ts` is added when missing."""
        entry = {"ts": utc_now(), **truncate(fields)}
        line = json.dumps(entry, ensure_ascii=False, sort_keys=False)
        with self._lock.held():
            append_line(self.path, line, fsync=False)

    def entries(self) -> list[dict[str, Any]]:
        """The parsed log (torn or corrupt lines are skipped)."""
        return read_jsonl(self.path)[0]
