"""TeammateIdle hooks: run once each time a teammate is about to wait idle (nothing to read,
nothing to claim). Exit 2 (or `decision: "block"`) keeps it working: the hook's stderr (or
reason) becomes a message for its next turn. At most MAX_STREAK such turns in a row, so a hook
that always blocks cannot keep a teammate calling its model forever. Never under a lock."""

from __future__ import annotations

from typing import Any

from ..events import Notice
from ..framing import labelled

MAX_STREAK = 3
SENDER = "TeammateIdle hook"


def idle_hook_work(mate: Any) -> list[str] | None:
    """The message a TeammateIdle hook gives the teammate, or None to go idle."""
    hooks = getattr(mate.rt, "hooks", None)
    if hooks is None or not hooks.active("TeammateIdle"):
        return None
    if mate.idle_hook_streak >= MAX_STREAK:
        if mate.idle_hook_streak == MAX_STREAK:
            mate.idle_hook_streak += 1
            mate.rt.events.emit(Notice(mate.name, f"TeammateIdle hook kept {mate.name} working "
                                       f"{MAX_STREAK} times in a row; letting it idle",
                                       level="warning"))
        return None
    reason = mate._status[2] if mate._status else ""
    outcome = hooks.run("TeammateIdle", mate.name, {
        "teammate_name": mate.name, "team_name": mate.rt.roster.team_name, "idle_reason": reason,
    }, cancel=mate.agent.cancel_event)
    if not outcome.blocked:
        return None
    mate.idle_hook_streak += 1
    text = outcome.why() or "keep working"
    return [labelled(SENDER, "message", text)]
