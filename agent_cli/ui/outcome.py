"""The honest outcome of a headless run: what the board says, not that the team went quiet.

`RunScope` remembers where the board's event log stood when the run began -- before a resumed
session's teammates start (a `-c` run's first claims are its own) -- and the tasks those
teammates still held, so the tasks the run touched (created or claimed during it, or carried
on from a resumed teammate's hands) are known. `explain` is read while the team is
still up (before shutdown releases held tasks): for each touched task not completed, the
reason the host knows -- the owner's idle reason (a denial, a failed verify, "ended 3 turns
without completing"), a teammate that failed with it, open blockers, or no teammate to claim
it. `assess` combines that with the board as the run leaves it on disk into the outcome:

    interrupted > timed_out > error (the lead's model failed, or a teammate failed in a run
    that touched no task) > unfinished > completed
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

OUTCOMES = ("completed", "unfinished", "timed_out", "interrupted", "error")
EXIT_CODES = {"completed": 0, "unfinished": 1, "timed_out": 1, "error": 1, "interrupted": 130}
_HOLDS = re.compile(r"^holds #\d+: ")


@dataclass
class RunScope:
    """The board's event log position at the start of a run, and the tasks the teammates it
    resumes held then (their work goes on in this run)."""

    start: int = 0
    carried: list[int] = field(default_factory=list)

    @classmethod
    def begin(cls, board: Any, resuming: list[str] | tuple[str, ...] = ()) -> RunScope:
        """Call before any resumed teammate starts: `resuming` names them."""
        names = set(resuming)
        carried = [t.id for t in board.snapshot().tasks
                   if t.status == "in_progress" and t.owner in names]
        return cls(len(board.events()), carried)

    def touched(self, board: Any) -> list[int]:
        """Ids of the tasks created or claimed since the run began, or carried on by a
        resumed teammate, in order."""
        ids: list[int] = list(self.carried)
        for event in board.events()[self.start:]:
            if event.get("action") in ("created", "claimed") and event["task_id"] not in ids:
                ids.append(event["task_id"])
        return ids


@dataclass
class Known:
    """Per touched task, what the host knew before shutdown: owner and reason."""

    owner: dict[int, str | None] = field(default_factory=dict)
    reason: dict[int, str] = field(default_factory=dict)


def explain(runtime: Any, task_ids: list[int]) -> Known:
    """Why each of `task_ids` is not completed, read while the team is still running."""
    known = Known()
    runtime.team.status.flush(1.0)  # the roster's idle reasons as the teammates last set them
    snap = runtime.board.snapshot()
    by_id = {t.id: t for t in snap.tasks}
    members = {m.name: m for m in runtime.roster.members()}
    here = set(runtime.team.running())
    busy = {n for n in here if not runtime.team.teammate(n).is_quiet()}
    live = here | {n for n, m in members.items()  # teammates of other processes or hosts
                   if n != "lead" and n not in here and runtime.roster.is_alive(m)}
    released = _last_release(runtime.board.events())
    for task_id in task_ids:
        task = by_id.get(task_id)
        if task is None or task.status == "completed":
            continue
        known.owner[task_id] = task.owner
        known.reason[task_id] = _reason(task, by_id, members, live, busy,
                                        released.get(task_id))
    return known


def _reason(task: Any, by_id: dict, members: dict, live: set[str], busy: set[str],
            release: Any) -> str:
    if task.status == "in_progress":
        member = members.get(task.owner)
        if task.owner not in live:
            return f"held by {task.owner}, who is not running"
        if task.owner in busy or (member is not None and member.status == "working"):
            return f"{task.owner} is still working on it"
        why = _HOLDS.sub("", (member.idle_reason if member else "") or "")
        return why or "in progress, not completed"
    blockers = [
        d for d in task.blocked_by or [] if getattr(by_id.get(d), "status", "") != "completed"
    ]
    if blockers:
        return "blocked by " + ", ".join(f"#{d}" for d in blockers)
    if release is not None and "failed" in release.get("reason", ""):
        who = release.get("owner", "")
        member = members.get(who)
        detail = f": {member.idle_reason}" if member is not None and member.idle_reason else ""
        return f"{who} failed{detail}; the task went back to pending"
    if release is not None:  # given back (a shutdown, `tasks release`) and not taken again
        why = f" ({release['reason']})" if release.get("reason") else ""
        again = "nobody claimed it again" if live else "no teammate left to claim it"
        return f"released by {release.get('owner') or 'its owner'}{why}; {again}"
    if not live:
        return "no teammate to claim it"
    return "not claimed: no teammate was free to take it"


def _last_release(events: list[dict]) -> dict[int, dict]:
    out: dict[int, dict] = {}
    for event in events:
        if event.get("action") == "released":
            out[event["task_id"]] = event.get("details") or {}
        elif event.get("action") in ("claimed", "completed"):
            out.pop(event["task_id"], None)
    return out


def assess(
    runtime: Any,
    touched: list[int],
    known: Known,
    *,
    interrupted: bool,
    timed_out: bool,
    lead_failed: bool,
    teammate_failed: bool,
) -> tuple[str, list[dict[str, Any]]]:
    """(outcome, unfinished entries) from the board as it is on disk now."""
    by_id = {t.id: t for t in runtime.board.snapshot().tasks}
    unfinished = []
    for task_id in touched:
        task = by_id.get(task_id)
        if task is None or task.status == "completed":
            continue
        unfinished.append({
            "id": task_id,
            "subject": task.subject,
            "status": task.status,
            "owner": known.owner.get(task_id, task.owner),
            "reason": known.reason.get(task_id, "not completed"),
        })
    if interrupted:
        outcome = "interrupted"
    elif timed_out:
        outcome = "timed_out"
    elif lead_failed or (teammate_failed and not touched):
        outcome = "error"
    elif unfinished:
        outcome = "unfinished"
    else:
        outcome = "completed"
    return outcome, unfinished


def unfinished_line(entry: dict[str, Any]) -> str:
    """'#4 "write tests" (in_progress, alice): ended 3 turns without completing ...'."""
    owner = f", {entry['owner']}" if entry.get("owner") else ""
    return f"#{entry['id']} \"{entry['subject']}\" ({entry['status']}{owner}): {entry['reason']}"
