"""Rows of the board's tables as the board's models: a `board_task` row as a Task, an event
row as the record `.tasks/events.jsonl` holds, times as the UTC ISO text of the file board.

`NOW` is the instant every statement works with: the database's clock (milliseconds, like
the file board), or the injected clock's value when a test gives one (`now_param`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from ..board.models import Task, Verify

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
NOW = "coalesce(%(now)s::timestamptz, date_trunc('milliseconds', statement_timestamp()))"
TASK_COLS = ("id, subject, description, status, owner, blocked_by, created_at, updated_at, "
             "claimed_at, claim_token, lease_expires_at, result, verify, assignee, role, "
             "require_plan")
T_COLS = ", ".join(f"t.{c.strip()}" for c in TASK_COLS.split(","))


def iso(value: datetime | None) -> str | None:
    """A timestamptz as the file board writes times: 2026-03-01T12:00:00.000Z."""
    if value is None:
        return None
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def now_param(clock: Callable[[], float] | None) -> datetime | None:
    """The `now` parameter: None (the database's clock) or the injected clock, in ms."""
    if clock is None:
        return None
    return EPOCH + timedelta(milliseconds=round(clock() * 1000))


def task_of(row: tuple) -> Task:
    """A Task from a row of TASK_COLS (the table's checks already hold its invariants)."""
    (tid, subject, description, status, owner, blocked_by, created, updated, claimed, token,
     lease, result, verify, assignee, role, plan) = row
    return Task(
        id=tid, subject=subject, description=description, status=status, owner=owner,
        blocked_by=list(blocked_by), created_at=iso(created), updated_at=iso(updated),
        claimed_at=iso(claimed), claim_token=token, lease_expires_at=iso(lease),
        result=result, verify=Verify.model_validate(verify) if verify is not None else None,
        assignee=assignee, role=role, require_plan=plan,
    )


def verify_json(verify: Verify | None) -> dict | None:
    return verify.model_dump(mode="json") if verify is not None else None


def event_of(row: tuple, epoch: str) -> dict[str, Any]:
    """A board_event row (time, actor, action, task_id, details, seq, n) as an events.jsonl
    record, its id `<epoch>:<seq>/<n>` like the file board's `<stamp>/<n>`."""
    time, actor, action, task_id, details, seq, n = row
    return {"time": iso(time), "actor": actor, "action": action, "task_id": task_id,
            "details": details, "id": f"{epoch}:{seq}/{n}"}
