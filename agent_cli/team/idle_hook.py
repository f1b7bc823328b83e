"""TeammateIdle hooks: run once each time a teammate is about to wait idle (nothing to read,
nothing to claim). Exit 2 (or `decision: "block"`) keeps it working: the hook's stderr (or
reason) becomes a message for its next turn. At most MAX_STREAK such turns in a row, so a hook
that always blocks cannot keep a teammate calling its model forever. Never under a lock."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from ..events import Notice
from ..framing import labelled

if TYPE_CHECKING:
    from ..events import EventBus
    from .teammate_state import TeammateState

MAX_STREAK = 3
SENDER = "TeammateIdle hook"


def idle_hook_work(
    hooks: Any, state: TeammateState, events: EventBus, team_name: str, cancel: threading.Event
) -> list[str] | None:
    """The message a TeammateIdle hook gives the teammate, or None to go idle."""
    if hooks is None or not hooks.active("TeammateIdle"):
        return None
    name = state.name
    if state.idle_hook_streak >= MAX_STREAK:
        if state.idle_hook_streak == MAX_STREAK:
            state.idle_hook_streak += 1
            events.emit(Notice(name, f"TeammateIdle hook kept {name} working "
                               f"{MAX_STREAK} times in a row; letting it idle", level="warning"))
        return None
    outcome = hooks.run("TeammateIdle", name, {
        "teammate_name": name, "team_name": team_name, "idle_reason": state.idle_reason,
    }, cancel=cancel)
    if not outcome.blocked:
        return None
    state.idle_hook_streak += 1
    text = outcome.why() or "keep working"
    return [labelled(SENDER, "message", text)]
