"""What a board change tells the rest of the process: one TaskEvent per event record.

The board builds them itself (section.py sends them after its lock), so every action that
logs to `events.jsonl` also notifies. The event's agent is the record's actor, its subject
the task's, its detail what the record says about the change (a result, a reason).
"""

from __future__ import annotations

from typing import Any

from ..events import TaskEvent
from .models import Task

DETAIL_OF = {"completed": "result", "released": "reason", "lease_expired": "reason"}


def announcement(record: dict[str, Any], task: Task | None, detail: str = "") -> TaskEvent:
    """The TaskEvent for `record` (written for `task`); `detail` replaces the record's own."""
    action = record["action"]
    if not detail and action in DETAIL_OF:
        detail = str(record["details"].get(DETAIL_OF[action]) or "")
    return TaskEvent(
        agent=record["actor"],
        action=action,
        task_id=record["task_id"],
        subject=task.subject if task is not None else "",
        detail=detail,
    )
