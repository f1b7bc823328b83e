"""Dependency rules of the board: what is claimable, why not, and what is broken.

Claimable = pending, no owner, and every `blockedBy` id exists, parses and is completed.
New dependencies are checked before they are written (missing id, self-dependency, cycle);
a board that holds a broken graph anyway (hand edit, corrupt file) is reported by
`graph_problems`, so a task is never left silently blocked forever. Pure functions over a
`{id: Task}` mapping plus the set of ids whose files are corrupt.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from ..errors import NotFound, Refused
from .models import Problem, Task

Tasks = Mapping[int, Task]
# Why this claimer may never take a task (its assignee or role is someone else's), or None.
MayTake = Callable[[Task], "str | None"]


def ids_text(ids: Iterable[int]) -> str:
    return ", ".join(f"#{i}" for i in ids)


def waiting_on(task: Task, tasks: Tasks) -> list[int]:
    """The dependencies of `task` that are not completed (missing or corrupt ones included)."""
    return [d for d in task.blocked_by if d not in tasks or tasks[d].status != "completed"]


def is_claimable(task: Task, tasks: Tasks) -> bool:
    return task.status == "pending" and task.owner is None and not waiting_on(task, tasks)


def claim_refusal(task: Task, owner: str, tasks: Tasks, held: Task | None) -> str | None:
    """Why `owner` may not claim `task` (one line), or None when the claim is allowed."""
    if task.status == "completed":
        return f"task {task.id} is completed"
    if task.status == "in_progress" or task.owner is not None:
        if task.owner == owner:
            return f"task {task.id} is already claimed by {owner}"
        return f"task {task.id} is owned by {task.owner}"
    if held is not None:
        return f"{owner} already holds #{held.id}"
    blockers = waiting_on(task, tasks)
    if blockers:
        return f"task {task.id} is blocked by {ids_text(blockers)}"
    return None


def check_new_dependencies(
    task_id: int, deps: Iterable[int], tasks: Tasks, corrupt: set[int]
) -> list[int]:
    """Validate dependencies about to be added to `task_id`; return them deduplicated, sorted.

    Raises NotFound for an unknown id and Refused for a corrupt dependency, a
    self-dependency or a cycle.
    """
    wanted = sorted(set(deps))
    for dep in wanted:
        if isinstance(dep, bool) or not isinstance(dep, int) or dep < 1:
            raise Refused(f"invalid task id {dep!r} in blocked-by")
        if dep == task_id:
            raise Refused(f"task {task_id} cannot be blocked by itself")
        if dep in corrupt:
            raise Refused(f"task {dep} is corrupt (see `agent-cli tasks doctor`)")
        if dep not in tasks:
            raise NotFound(f"no task {dep}")
    for dep in wanted:
        path = _path_between(dep, task_id, tasks)
        if path is not None:
            cycle = [task_id, *path]
            raise Refused(
                f"blocking #{task_id} on #{dep} would make a cycle: "
                + " -> ".join(f"#{i}" for i in cycle)
            )
    return wanted


def _path_between(start: int, goal: int, tasks: Tasks) -> list[int] | None:
    """A dependency path start -> ... -> goal following blockedBy edges, or None."""
    parent: dict[int, int | None] = {start: None}
    stack = [start]
    while stack:
        node = stack.pop()
        if node == goal:
            path = [node]
            while parent[path[-1]] is not None:
                path.append(parent[path[-1]])  # type: ignore[arg-type]
            return list(reversed(path))
        task = tasks.get(node)
        for dep in task.blocked_by if task else ():
            if dep not in parent:
                parent[dep] = node
                stack.append(dep)
    return None


def find_cycles(tasks: Tasks) -> list[list[int]]:
    """Every dependency cycle, each once, as ids starting at its lowest id."""
    color: dict[int, int] = {}  # 1 = on the current path, 2 = done
    cycles: list[list[int]] = []
    for root in sorted(tasks):
        if root in color:
            continue
        path: list[int] = []
        stack: list[tuple[int, int]] = [(root, 0)]
        while stack:
            node, idx = stack.pop()
            if idx == 0:
                color[node] = 1
                path.append(node)
            deps = tasks[node].blocked_by if node in tasks else []
            if idx < len(deps):
                stack.append((node, idx + 1))
                dep = deps[idx]
                if dep not in tasks:
                    continue
                if color.get(dep) == 1:
                    cyc = path[path.index(dep) :]
                    low = cyc.index(min(cyc))
                    cycles.append(cyc[low:] + cyc[:low])
                elif dep not in color:
                    stack.append((dep, 0))
            else:
                color[node] = 2
                path.pop()
    return cycles


def graph_problems(tasks: Tasks, corrupt: set[int], path_of: Mapping[int, str]) -> list[Problem]:
    """Broken dependencies on a board: missing, corrupt, self and cyclic ones."""
    problems: list[Problem] = []
    for tid in sorted(tasks):
        task = tasks[tid]
        if task.status == "completed":
            continue
        for dep in task.blocked_by:
            msg = None
            if dep == tid:
                msg = "is blocked by itself"
            elif dep in corrupt:
                msg = f"is blocked by #{dep}, whose file is corrupt"
            elif dep not in tasks:
                msg = f"is blocked by #{dep}, which does not exist"
            if msg:
                problems.append(Problem(path=path_of.get(tid, ""), task_id=tid, message=msg))
    for cyc in find_cycles(tasks):
        if len(cyc) == 1:
            continue  # a self-dependency, reported above
        text = " -> ".join(f"#{i}" for i in [*cyc, cyc[0]])
        problems.append(
            Problem(
                path=path_of.get(cyc[0], ""), task_id=cyc[0], message=f"dependency cycle {text}"
            )
        )
    return problems


def newly_unblocked(done_id: int, tasks: Tasks) -> list[int]:
    """Ids that list `done_id` as a dependency and are claimable now (tasks = state after)."""
    return [
        t.id
        for t in sorted(tasks.values(), key=lambda t: t.id)
        if done_id in t.blocked_by and is_claimable(t, tasks)
    ]


def first_claimable(
    order: Iterable[int], tasks: Tasks, may_take: Callable[[Task], bool] | None = None
) -> Task | None:
    """The first claimable task in `order` (ascending ids: the documented claim order) that
    `may_take` allows this claimer."""
    for tid in order:
        task = tasks.get(tid)
        if task is not None and (may_take is None or may_take(task)):
            if is_claimable(task, tasks):
                return task
    return None


def idle_text(
    owner: str,
    tasks: Tasks,
    corrupt: set[int],
    held: Task | None,
    not_for_me: MayTake | None = None,
    reserved: Callable[[Task], str] | None = None,
) -> str:
    """Why `owner` has nothing to claim, in one line (`reserved` names a task `not_for_me`
    keeps from it: "#7 is assigned to writer")."""
    if held is not None:
        return f"{owner} holds #{held.id}"
    if not tasks and not corrupt:
        return "no tasks on the board"
    if tasks and all(t.status == "completed" for t in tasks.values()) and not corrupt:
        return f"all {len(tasks)} tasks completed"
    first = first_claimable(
        sorted(tasks), tasks, None if not_for_me is None else lambda t: not_for_me(t) is None
    )
    if first is not None:
        return f"#{first.id} is claimable"
    waiting = []
    broken = []
    others = []
    for tid in sorted(tasks):
        task = tasks[tid]
        if task.status != "pending":
            continue
        if not_for_me is not None and not_for_me(task) is not None:
            others.append(reserved(task) if reserved else f"#{tid} is not for {owner}")
            continue
        blockers = waiting_on(task, tasks)
        bad = [d for d in blockers if d not in tasks or d in corrupt]
        if bad:
            broken.append(f"#{tid} needs {ids_text(bad)} (missing or corrupt)")
        elif blockers:
            waiting.append(f"#{tid} waits for {ids_text(blockers)}")
    busy = [f"#{t.id} ({t.owner})" for t in tasks.values() if t.status == "in_progress"]
    parts = broken + waiting[:3]
    if len(waiting) > 3:
        parts.append(f"{len(waiting) - 3} more waiting")
    parts += others[:3]
    if len(others) > 3:
        parts.append(f"{len(others) - 3} more for others")
    if busy and not parts:
        parts.append("in progress: " + ", ".join(busy[:5]))
    if corrupt:
        parts.append(f"corrupt: {ids_text(sorted(corrupt))}")
    return "no claimable task: " + ("; ".join(parts) if parts else "nothing pending")
