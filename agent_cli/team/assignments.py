"""Tasks nobody running may take: assigned to a member who is not running, or for a role no
running member has. They are never silently blocked forever: `/tasks` and `tasks list` mark
them, and the lead is told once per task and cause (a message from "board" in its inbox),
checked when each lead turn starts and ends. `routed` checks a create's or update's
assignee and role against the roster before the board sees them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from ..errors import AgentCliError, UserError
from ..events import MessageEvent, Notice, TurnFinished
from ..names import LEAD

if TYPE_CHECKING:
    from ..board.models import Task
    from ..runtime import Runtime
    from .roster import Member, Roster

SENDER = "board"  # the name the host's notes about the board are sent under
ENDED = {"shutdown": "shut down", "failed": "failed"}


def stranded(
    tasks: Iterable[Task], members: Iterable[Member], alive: Callable[[Member], bool]
) -> dict[int, str]:
    """task id -> why no running member may take it ("assigned to writer, who is not
    running (shut down)"), for every pending task with an assignee or a role."""
    from ..board.routing import same_role  # with the task model: not before the first prompt

    by_name = {m.name: m for m in members}
    running = [m for m in by_name.values() if m.status not in ENDED and alive(m)]
    running_names = {m.name for m in running}
    out: dict[int, str] = {}
    for task in tasks:
        if task.status != "pending" or (task.assignee is None and task.role is None):
            continue
        if task.assignee is not None:
            member = by_name.get(task.assignee)
            if member is None:
                out[task.id] = f"assigned to {task.assignee}, who is not on the team"
            elif member.name not in running_names:
                why = ENDED.get(member.status, "no live session runs it")
                out[task.id] = f"assigned to {task.assignee}, who is not running ({why})"
            elif task.role is not None and not same_role(task.role, member.role):
                out[task.id] = (
                    f"assigned to {task.assignee}, whose role is {member.role!r}, "
                    f"not {task.role!r}"
                )
        elif not any(same_role(task.role, m.role) for m in running):
            out[task.id] = f"for role {task.role!r}, which no running teammate has"
    return out


def marks(rt: Runtime, tasks: Iterable[Task]) -> dict[int, str]:
    """`stranded` for a board read from `rt` (the roster as this process sees it)."""
    return stranded(tasks, rt.roster.snapshot().members, rt.roster.is_alive)


class AssignmentWatch:
    """Tells the lead once about each stranded task (per task, assignee/role and cause).

    Checks at the start of each lead turn (before its inbox is read, so a teammate that
    shut down or failed since is in that turn's inbox) and at its end (on the lead's thread,
    so a headless run sees the note before it decides whether the lead needs another turn).
    Never on a teammate's thread: its ending is not held up. Not while the team is closing
    (`active` false): everyone stops then, that is no news.
    """

    def __init__(self, runtime: Runtime, active: Callable[[], bool] = lambda: True) -> None:
        self.rt = runtime
        self._active = active
        self._told: set[tuple[int, str]] = set()
        self._lock = threading.Lock()

    def on_event(self, event: object) -> None:
        """An EventBus subscriber: check when a lead turn ends."""
        if isinstance(event, TurnFinished) and event.agent == LEAD:
            self.check()

    def check(self) -> list[str]:
        """Send the lead the notes it was not sent yet; returns them."""
        if not self._active():
            return []
        try:
            found = marks(self.rt, self.rt.board.snapshot().tasks)
        except (AgentCliError, OSError) as exc:
            self.rt.events.emit(Notice(agent=LEAD, level="warning", text=f"board: {exc}"))
            return []
        with self._lock:
            new = [(tid, why) for tid, why in sorted(found.items()) if (tid, why) not in self._told]
            self._told.update(new)
        notes = [
            f"task #{tid} is {why}: spawn that teammate, or reassign the task with "
            "update_task (assignee/role; \"\" clears it)"
            for tid, why in new
        ]
        for note in notes:
            try:
                self.rt.mail.send(SENDER, LEAD, note, type="message")
            except (AgentCliError, OSError) as exc:
                self.rt.events.emit(Notice(agent=LEAD, level="warning", text=f"{note} ({exc})"))
                continue
            self.rt.events.emit(
                MessageEvent(agent=SENDER, to=LEAD, msg_type="message", preview=note[:120])
            )
        return notes


def check_pairing(roster: Roster, assignee: str | None, role: str | None) -> None:
    """Refuse an assignee and a role that could never meet: a member of another role."""
    if not assignee or not role:
        return
    from ..board.routing import check_assignee, same_role

    member = roster.get(check_assignee(assignee) or "")
    if member is not None and not same_role(member.role, role):
        raise UserError(
            f"{assignee}'s role is {member.role!r}, not {role!r}: give one or the other"
        )


def routed(
    roster: Roster, assignee: str | None, role: str | None, require_plan: bool | None
) -> dict:
    """The routing keyword arguments of `board.create` / `board.update`, the same for the
    CLI and the board tools: refused first when assignee and role could never meet."""
    check_pairing(roster, assignee, role)
    return {"assignee": assignee, "role": role, "require_plan": require_plan}
