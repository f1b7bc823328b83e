"""Who may take a task: its assignee (one member) and/or its role (members of that role).

A task with neither is anyone's. The board knows names, not the team: the claimer's role is
passed in at claim time. Roles compare the way the roster stores them: whitespace runs
collapsed, case ignored. Pure functions; the store calls them inside its critical section.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..errors import UserError
from ..names import LEAD, check_name
from .dag import is_claimable
from .models import Task

MAX_ROLE_CHARS = 200  # the roster's limit on a member's role


def normalize_role(role: str) -> str:
    return " ".join(role.split())


def same_role(a: str | None, b: str | None) -> bool:
    return a is not None and b is not None and normalize_role(a).casefold() == normalize_role(
        b
    ).casefold()


def allowed(task: Task, name: str, role: str | None) -> bool:
    """The fast form of `refusal(...) is None` (claim_next asks it of every pending task)."""
    if task.assignee is not None and task.assignee != name:
        return False
    return task.role is None or same_role(task.role, role)


def first_for(
    order: Iterable[int], tasks: Mapping[int, Task], name: str, role: str | None
) -> Task | None:
    """claim_next's scan: the first claimable task in `order` that `name` may take (the
    routing check inlined: this loop runs over every pending task under the lock)."""
    for tid in order:
        task = tasks.get(tid)
        if task is None:
            continue
        if task.assignee is not None and task.assignee != name:
            continue
        if task.role is not None and not same_role(task.role, role):
            continue
        if is_claimable(task, tasks):
            return task
    return None


def refusal(task: Task, name: str, role: str | None) -> str | None:
    """Why `name` (whose role is `role`, None if unknown) may never take `task`, or None."""
    if task.assignee is not None and task.assignee != name:
        return f"task {task.id} is assigned to {task.assignee}"
    if task.role is not None and not same_role(task.role, role):
        who = f"{name} is {normalize_role(role)!r}" if role else f"{name} has no role"
        return f"task {task.id} is for role {task.role!r} ({who})"
    return None


def claim_refusal(task: Task, name: str, role: str | None) -> str | None:
    """`refusal` for a task still up for claiming (a claimed one is refused for that)."""
    if task.status != "pending" or task.owner is not None:
        return None
    return refusal(task, name, role)


def fields(assignee: object, role: object, require_plan: object) -> dict:
    """create's routing fields, checked (UserError with one line)."""
    return _checked({"assignee": assignee, "role": role, "require_plan": require_plan})


def short_reason(task: Task) -> str:
    """The idle-reason phrase for a task someone else must take: '#7 is assigned to writer'."""
    if task.assignee is not None:
        return f"#{task.id} is assigned to {task.assignee}"
    return f"#{task.id} is for role {task.role!r}"


def check_assignee(value: object) -> str | None:
    """A create/update argument: None or "" = nobody; else a member name (not the lead)."""
    if value is None or value == "":
        return None
    name = check_name(value, "assignee")
    if name == LEAD:
        raise UserError("the lead does not claim tasks: assign a teammate")
    return name


def check_role(value: object) -> str | None:
    """A create/update argument: None or "" = any role; else one line of text."""
    if value is None or value == "":
        return None
    if not isinstance(value, str) or "\x00" in value or "\n" in value.strip():
        raise UserError("role must be one line of text")
    role = normalize_role(value)
    if not role:
        raise UserError("role is empty")
    if any(ord(c) < 32 or ord(c) == 127 for c in role):
        raise UserError("role must be printable text (no control characters)")
    if len(role) > MAX_ROLE_CHARS:
        raise UserError(f"role is too long ({len(role)} chars, at most {MAX_ROLE_CHARS})")
    return role


def check_flag(value: object, what: str = "require_plan") -> bool:
    if not isinstance(value, bool):
        raise UserError(f"{what} must be true or false")
    return value


def short(task: object) -> str:
    """The compact form for a table column: '@writer', 'role tester', '+plan'."""
    return " ".join(_route_parts(task, "@", "role ", "+plan"))


def describe(task: Task) -> str:
    """'assigned to writer, role tester, plan required' for one-line task listings."""
    return ", ".join(_route_parts(task, "assigned to ", "role ", "plan required"))


def _route_parts(task: object, to: str, of_role: str, plan: str) -> list[str]:
    """The routing a task carries, in words; any object with those attributes (a watch
    frame's stand-in task too) reads as unrouted where they are missing or empty."""
    assignee, role = getattr(task, "assignee", None), getattr(task, "role", None)
    return [
        *([f"{to}{assignee}"] if assignee else []),
        *([f"{of_role}{role}"] if role else []),
        *([plan] if getattr(task, "require_plan", False) else []),
    ]


def changes(assignee: str | None, role: str | None, require_plan: bool | None) -> dict:
    """The routing fields an update sets: None keeps a field, "" clears assignee / role."""
    given = {"assignee": assignee, "role": role, "require_plan": require_plan}
    return _checked({k: v for k, v in given.items() if v is not None})


def _checked(given: dict) -> dict:
    checks = {"assignee": check_assignee, "role": check_role, "require_plan": check_flag}
    return {k: checks[k](v) for k, v in given.items()}


def not_pending(task: Task, rerouting: bool) -> str:
    """update's refusal for a task that is no longer pending."""
    what = "be reassigned" if rerouting else "get new dependencies"
    owner = f" (owned by {task.owner})" if task.status == "in_progress" else ""
    return f"task {task.id} is {task.status}{owner}: only a pending task can {what}"
