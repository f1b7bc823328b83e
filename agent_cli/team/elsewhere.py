"""Work on a run's tasks that teammates in other processes (or on other hosts) still do.

A headless `-p --wait` run waits for its own teammates through Team.wait_quiet; teammates
that joined from elsewhere (`agent-cli teammate NAME`, this host or another) are not threads
of this process, so the run asks the board and the roster instead: a task the run created
or claimed is still worked elsewhere while it is not completed and a live member outside
this process holds it, or could claim it (it is pending, or its holder is gone and its lease
will run out). Liveness is the roster's: a pid on this host, a heartbeat for a database
board. A task nobody alive holds or can claim does not keep the run waiting.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..board import routing
from ..errors import AgentCliError
from ..names import LEAD

if TYPE_CHECKING:
    from ..board.models import Task
    from ..team.roster import Member


def worked_elsewhere(runtime: Any, touched: Callable[[], list[int]]) -> list[str]:
    """One line per task of `touched()` (read only when someone outside runs) that a live
    member outside this process holds or can claim ("#2 held by bob on host-b", "#3: alice
    can claim it"); [] when none (or when the board or the roster cannot be read: the run
    does not wait on what it cannot see)."""
    try:
        here = {LEAD, *runtime.team.running()}
        outside = [m for m in runtime.roster.members() if m.name not in here]
        live = {m.name: m for m in outside
                if m.status not in ("shutdown", "failed") and runtime.roster.is_alive(m)}
        if not live:
            return []
        task_ids = touched()
        if not task_ids:
            return []
        by_id = {t.id: t for t in runtime.board.snapshot().tasks}
    except AgentCliError:
        return []
    lines = []
    for task_id in task_ids:
        task = by_id.get(task_id)
        line = None if task is None else _line(task, live, here)
        if line is not None:
            lines.append(line)
    return lines


def _line(task: Task, live: dict[str, Member], here: set[str]) -> str | None:
    if task.status == "completed":
        return None
    if task.status == "in_progress":
        holder = live.get(task.owner or "")
        if holder is not None:
            return f"#{task.id} held by {holder.name} on {holder.host or 'this host'}"
        if task.owner in here:  # one of this process's own teammates: wait_quiet's
            return None
    able = [m.name for m in live.values() if routing.allowed(task, m.name, m.role)]
    if not able:
        return None
    return f"#{task.id}: {', '.join(able)} can claim it"
