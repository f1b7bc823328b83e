"""The start-up question about the hooks a project's `.agent-cli/settings.json` brings."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.text import Text

from ..errors import AgentCliError


def hooks_question(held: Any) -> Text:
    """Every held command, with its event and matcher, before the human says yes or no."""
    text = Text()
    text.append(f"{held.path.parent.name}/{held.path.name} in this workdir (it comes with the "
                f"repository) has hooks that run commands:\n", style="yellow")
    for spec in held.specs:
        text.append(f"  {spec.event}", style="bold")
        if spec.matcher.strip() not in ("", "*"):
            text.append(f" [{spec.matcher}]")
        text.append(f"  {spec.command}\n", style="dim")
    text.append("They run as you, with your rights, outside the permission gate. Your answer "
                "is kept in .agent-cli/settings.local.json; changed hooks are asked about "
                "again.", style="dim")
    return text


def ask_project_hooks(runtime: Any, question: Callable[[Text, str], bool]) -> None:
    """Ask once about held project hooks; on yes, trust them and run them from now on."""
    held = getattr(runtime, "held_hooks", None)
    if held is None:
        return
    if not question(hooks_question(held), "Run them? [y/N] "):
        return  # still held: SessionStart's warning line says so
    from ..permissions.hook_trust import ProjectHookTrust

    runtime.hooks.add(held.specs)
    runtime.held_hooks = None
    try:
        ProjectHookTrust(runtime.settings).save(held.raw)
    except (AgentCliError, OSError) as exc:  # trusted for this session; said, not fatal
        runtime.hook_warnings = [*runtime.hook_warnings, f"answer not saved: {exc}"]
