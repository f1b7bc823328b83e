"""The lead's token usage on disk, `.team/lead_usage.json`, so another process (`agent-cli
watch`) can show what the lead costs: the lead is not a roster member.

Rewritten (atomically, not fsync'd: it is a gauge, not a record) after each of the lead's
model responses, with the pid and host of the session. A reader treats a missing or
unreadable file as "no lead usage known".
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from ..errors import StorageError, UnusableFile
from ..events import Event, UsageEvent
from ..fsutil import atomic_write_json, parse_json, read_state, set_aside, utc_now
from ..names import LEAD

log = logging.getLogger(__name__)
FILE = "lead_usage.json"
MAX_BYTES = 1 << 20


class LeadUsage:
    """Subscribed to the runtime's events: writes the lead's ledger after each response."""

    def __init__(self, team_dir: Path, agent: Any, host: str) -> None:
        self.path = Path(team_dir) / FILE
        self.agent = agent
        self.host = host

    def on_event(self, event: Event) -> None:
        if isinstance(event, UsageEvent) and event.agent == LEAD:
            self.write()

    def write(self) -> None:
        data = {"agent": LEAD, "pid": os.getpid(), "host": self.host, "updated_at": utc_now(),
                "model": getattr(self.agent.model, "name", None),
                "spend": self.agent.spend.rows()}
        try:  # (atomic_write_json makes .team/ without following a link there)
            try:
                atomic_write_json(self.path, data, fsync=False)
            except UnusableFile as exc:  # a link or FIFO planted there: set aside, never used
                if exc.path != self.path:
                    raise
                set_aside(self.path, "unusable")
                atomic_write_json(self.path, data, fsync=False)
        except (OSError, StorageError) as exc:  # a gauge: never fail the lead's turn
            log.warning("cannot record the lead's usage in %s: %s", self.path, exc)


def read_lead_usage(team_dir: Path) -> dict[str, Any] | None:
    """The file's object, or None when it is missing, not a regular file, too big or not
    the expected JSON (fsutil.read_state: never followed through a symlink, never blocking
    on a FIFO; JSON nested too deeply is just "not the expected JSON")."""
    path = Path(team_dir) / FILE
    try:
        raw = read_state(path, MAX_BYTES)
        data = parse_json(raw) if raw is not None else None
    except (StorageError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("spend"), list):
        return None
    return data
