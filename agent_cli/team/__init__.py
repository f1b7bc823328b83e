"""The team's shared state under .team/ and the teammate threads that use it.

State stores (each testable alone, built from a plain path): `mailbox` (JSONL inboxes with
acknowledged cursors), `roster` (config.json), `protocol` (requests.json). `manager` and
`teammate` run the threads. This module only holds what every store shares: `StateLock` and
`set_aside`; it imports no submodule, so importing the package stays cheap and cycle-free.
"""

from __future__ import annotations

from pathlib import Path

from .. import fsutil
from ..errors import StorageError  # noqa: F401  (re-exported for the stores)
from ..locking import LOCK_TIMEOUT_S, StateLock  # noqa: F401  (shared by every store)


def set_aside(path: Path) -> Path | None:
    """Rename a corrupt state file to `<name>.corrupt-<utc stamp>` (never delete it), without
    following a symlink on the way (fsutil.set_aside). None if `path` did not exist."""
    return fsutil.set_aside(path, "corrupt")
