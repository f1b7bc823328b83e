"""`.tasks/events.jsonl`: one JSON object per board change, the log a user reads to watch
teammates auto-claim. Each record: time, actor, action, task_id, details.

Appends happen under the board lock as one whole line. The line is not fsync'd (the task file
it describes is): after a power loss the log may lose its tail, never a task. A torn last line
(no newline yet) is skipped by readers; a malformed complete line is reported by doctor.

Each record also has an `id` (`<epoch>:<seq>/<n>`: the board write that made it, see
journal.py), so a record carried in the write-ahead stamp is appended at most once: a writer
killed between its task-file write and its append leaves the record in `.stamp`, and the next
locked refresh appends it if the task write landed (`landed_events`, `missing_from_log`).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import UnusableFile
from ..fsutil import append_line, open_state, parse_json, utc_now
from ..jsonlines import read_jsonl
from .models import Problem, Task

TAIL_BYTES = 65536  # a dead writer's records can only be the last lines of the log


def event_record(actor: str, action: str, task_id: int, **details: Any) -> dict[str, Any]:
    return {
        "time": utc_now(),
        "actor": actor,
        "action": action,
        "task_id": task_id,
        "details": details,
    }


def with_ids(stamp: str, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records of the write that moves the stamp to `stamp`, each with its unique id."""
    return [{**r, "id": f"{stamp}/{n}"} for n, r in enumerate(records)]


def task_digest(task: Task) -> str:
    text = json.dumps(task.to_json(), sort_keys=True, ensure_ascii=False)
    return hashlib.blake2b(text.encode("utf-8"), digest_size=8).hexdigest()


def pending_line(records: list[dict[str, Any]], tasks: list[Task]) -> str:
    """One JSON line for the stamp: the records, and a digest of each task being written."""
    data = {"events": records, "tasks": {str(t.id): task_digest(t) for t in tasks}}
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def landed_events(pending: str, current: Callable[[int], Task | None]) -> list[dict[str, Any]]:
    """The pending records whose task write landed: the task on disk now is the one that
    write wrote (`current(id)` reads it). ValueError when `pending` is not such a line."""
    try:
        data = parse_json(pending)
        digests, records = data["tasks"], data["events"]
        landed = []
        for record in records:
            task = current(record["task_id"])
            if task is not None and task_digest(task) == digests.get(str(record["task_id"])):
                landed.append(record)
        return landed
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise ValueError(f"not a pending-events line ({exc!r})") from None


def missing_from_log(path: Path, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Those of `records` whose id is not in the log's last lines."""
    try:
        fd = open_state(path, os.O_RDONLY)
    except FileNotFoundError:
        return list(records)
    try:
        size = os.fstat(fd).st_size
        tail = os.pread(fd, TAIL_BYTES, max(0, size - TAIL_BYTES))
    finally:
        os.close(fd)
    return [r for r in records if f'"id":{json.dumps(r.get("id"))}'.encode() not in tail]


def append_event(path: Path, record: dict[str, Any]) -> None:
    append_line(path, json.dumps(record, ensure_ascii=False, separators=(",", ":")), fsync=False)


def read_events(path: Path) -> tuple[list[dict[str, Any]], list[Problem]]:
    """Every complete, well-formed record, and a Problem per malformed complete line."""
    try:
        records, bad = read_jsonl(path)
    except UnusableFile as exc:  # a link, FIFO, directory or over its cap: never read
        return [], [Problem(path=str(path), message=f"{exc.detail}; not read")]
    return records, [Problem(path=p.where, message="malformed event line") for p in bad]


def tail_events(path: Path, count: int, tail_bytes: int = 32768) -> list[dict[str, Any]]:
    """The last `count` complete, well-formed records, from the log's last `tail_bytes`
    (a torn last line is skipped; a link, FIFO or unreadable log gives [])."""
    try:
        fd = open_state(path, os.O_RDONLY)
    except (OSError, UnusableFile):  # missing, or not a regular file: nothing to show
        return []
    try:
        size = os.fstat(fd).st_size
        raw = os.pread(fd, tail_bytes, max(0, size - tail_bytes))
    finally:
        os.close(fd)
    lines = raw.split(b"\n")[:-1]  # the part after the last newline is still being written
    if size > tail_bytes and lines:
        lines = lines[1:]  # the first line may be cut by the tail's start
    records: list[dict[str, Any]] = []
    for line in reversed(lines):
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            records.append(record)
            if len(records) == count:
                break
    return list(reversed(records))
