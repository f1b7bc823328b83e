"""Where Claude Code's remaining hook events fire in agent-cli (see permissions/hooks.py):

- `PermissionRequest` (matcher: the tool): the gate is about to ask the human. A hook's
  `hookSpecificOutput.decision.behavior` "deny" refuses without asking (its `message` is the
  reason); "allow" answers for the human -- except where an ask rule or a PreToolUse hook's
  ask forced the question: those always reach the human.
- `Notification` (matcher: `notification_type`): `permission_prompt` when an approval waits
  for the human, `idle_prompt` when the whole team went idle. Informational.
- `PreCompact` (matcher: `trigger`, manual | auto): before a conversation is summarized.
- `SubagentStart` / `SubagentStop` (matcher: the teammate's role): a teammate starts / ends a
  turn. Informational (a hook that must keep a teammate working uses TeammateIdle).

Every helper takes the session's HookRunner (or None) and never raises.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from .hook_tools import claude_input, claude_name


def notify(hooks: Any, agent: str, kind: str, message: str) -> None:
    """Notification of `kind` (permission_prompt, idle_prompt) with `message`."""
    if hooks is not None and hooks.active("Notification", kind):
        hooks.run("Notification", agent, {"message": message, "notification_type": kind}, kind)


def permission_request(hooks: Any, agent: str, tool: str, raw: dict[str, Any], root: Path,
                       cancel: threading.Event | None) -> tuple[str | None, str]:
    """PermissionRequest before the human is asked: ("allow" | "deny" | None, reason)."""
    if hooks is None or not hooks.active("PermissionRequest", tool):
        return None, ""
    fields = {"tool_name": claude_name(tool), "tool_input": claude_input(tool, raw, root)}
    outcome = hooks.run("PermissionRequest", agent, fields, tool, cancel)
    if outcome.blocked:
        return "deny", outcome.why()
    return outcome.behavior, outcome.why()


def pre_compact(hooks: Any, agent: str, trigger: str, instructions: str = "") -> None:
    """PreCompact, `trigger` manual (/compact) or auto (the context grew past its limit)."""
    if hooks is not None and hooks.active("PreCompact", trigger):
        hooks.run("PreCompact", agent, {"trigger": trigger,
                                        "custom_instructions": instructions}, trigger)


def subagent_start(hooks: Any, agent: str, role: str) -> None:
    """SubagentStart: teammate `agent` (of `role`) starts a turn."""
    if hooks is not None and hooks.active("SubagentStart", role):
        hooks.run("SubagentStart", agent, {"agent_id": agent, "agent_type": role}, role)


def subagent_stop(hooks: Any, agent: str, role: str, last_message: str) -> None:
    """SubagentStop: teammate `agent` ended a turn (its last text)."""
    if hooks is not None and hooks.active("SubagentStop", role):
        hooks.run("SubagentStop", agent, {
            "agent_id": agent, "agent_type": role, "stop_hook_active": False,
            "last_assistant_message": last_message}, role)
