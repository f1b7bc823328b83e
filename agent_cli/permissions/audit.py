"""The audit log: one JSON line per permission decision in `.team/audit.jsonl`.

Each line: ts, agent, tool, input, decision (allow|deny), source (the rule text, "mode
acceptEdits", "plan", "human", "headless", ...), feedback, and for a shell command the reason
it asked. The input is kept whole: a string longer than INLINE_MAX characters is stored aside
in `.team/audit-blobs/<sha256>.txt` and the line holds `{"$blob": "sha256:...", "chars": N}`
in its place, so `AuditLog.full_input(entry)` always gives back exactly what was decided on
(the hash is checked). Appends are whole lines under a thread lock plus a file lock, so
threads and processes never interleave.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from ..errors import StorageError
from ..fsutil import append_line, atomic_write_text, ensure_dir, utc_now
from ..jsonlines import read_jsonl
from ..locking import StateLock

INLINE_MAX = 20_000  # characters; a longer string goes to a blob file
BLOB_DIR = "audit-blobs"


class AuditLog:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.blobs = self.path.parent / BLOB_DIR
        self._lock = StateLock(Path(str(self.path) + ".lock"))

    def record(self, **fields: Any) -> None:
        """Append one decision. Unknown fields are kept; `ts` is added when missing."""
        entry = {"ts": utc_now(), **self._keep(fields)}
        line = json.dumps(entry, ensure_ascii=False, sort_keys=False)
        with self._lock.held():
            append_line(self.path, line, fsync=False)

    def entries(self) -> list[dict[str, Any]]:
        """The parsed log (torn or corrupt lines are skipped)."""
        return read_jsonl(self.path)[0]

    def full_input(self, entry: dict[str, Any]) -> Any:
        """The entry's input with every blob read back (StorageError if one is missing or
        does not match its hash)."""
        return self._restore(entry.get("input"))

    # ----- blobs ----------------------------------------------------------------------------
    def _keep(self, value: Any) -> Any:
        if isinstance(value, str):
            return value if len(value) <= INLINE_MAX else self._aside(value)
        if isinstance(value, dict):
            return {str(k): self._keep(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self._keep(v) for v in value]
        if value is None or isinstance(value, bool | int | float):
            return value
        return self._keep(str(value))

    def _aside(self, text: str) -> dict[str, Any]:
        data = text.encode("utf-8", errors="surrogatepass")
        digest = hashlib.sha256(data).hexdigest()
        path = self.blobs / f"{digest}.txt"
        try:
            if not path.is_file():
                ensure_dir(self.blobs)
                atomic_write_text(path, text, fsync=False)
        except StorageError:
            return text  # no room aside: keep it whole in the line itself
        return {"$blob": f"sha256:{digest}", "chars": len(text)}

    def _restore(self, value: Any) -> Any:
        if isinstance(value, dict) and set(value) == {"$blob", "chars"}:
            digest = str(value["$blob"]).removeprefix("sha256:")
            path = self.blobs / f"{digest}.txt"
            try:
                text = path.read_text(encoding="utf-8", errors="surrogatepass")
            except OSError as exc:
                raise StorageError(f"audit blob {path.name} is unreadable: {exc}") from None
            got = hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()
            if got != digest:
                raise StorageError(f"audit blob {path.name} does not match its hash")
            return text
        if isinstance(value, dict):
            return {k: self._restore(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._restore(v) for v in value]
        return value
