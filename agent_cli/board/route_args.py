"""The routing arguments a task is created or updated with (assignee, role, require_plan):
what each means, and whether an update gives any. The CLI's flags and the board tools'
fields both take them from here; board/routing.py checks their values. No pydantic: the
CLI reads this while it builds its parser."""

from __future__ import annotations

ASSIGNEE_MEANS = "only this teammate may claim it"
ROLE_MEANS = "only teammates of this role may claim it"
PLAN_MEANS = "whoever claims it must get a plan for it approved before acting"


def reroutes(assignee: object, role: object, require_plan: object) -> bool:
    """Whether an update's routing arguments ask for any change (None keeps a field)."""
    return assignee is not None or role is not None or require_plan is not None
