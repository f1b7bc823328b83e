"""`.tasks/events.jsonl`: one JSON object per board change, the log a user reads to watch
teammates auto-claim. Each record: time, actor, action, task_id, details.

Appends happen under the board lock as one whole line. The line is not fsync'd (the task file
it describes is): after a power loss the log may lose its tail, never a task. A torn last line
(no newline yet) is skipped by readers; a malformed complete line is reported by doctor.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..fsutil import append_line, read_jsonl, utc_now
from .models import Problem


def event_record(actor: str, action: str, task_id: int, **details: Any) -> dict[str, Any]:
    return {
        "time": utc_now(),
        "actor": actor,
        "action": action,
        "task_id": task_id,
        "details": details,
    }


def append_event(path: Path, record: dict[str, Any]) -> None:
    append_line(path, json.dumps(record, ensure_ascii=False, separators=(",", ":")), fsync=False)


def read_events(path: Path) -> tuple[list[dict[str, Any]], list[Problem]]:
    """Every complete, well-formed record, and a Problem per malformed complete line."""
    records, bad = read_jsonl(path)
    return records, [Problem(path=p.where, message="malformed event line") for p in bad]
