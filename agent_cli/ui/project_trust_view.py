"""The start-up question about what a repository's settings (`.agent-cli/settings.json`,
`.claude/settings.json`) would widen: its allow rules, additional directories, a widening
defaultMode, its env,
statusLine and hooks (permissions/project_trust.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from rich.text import Text

from ..errors import AgentCliError
from ..safetext import visible


def settings_question(held: Any, hooks: Any) -> Text:
    """Every held allow rule, the mode and every held hook command, before yes or no."""
    text = Text()
    text.append(f"{getattr(held, 'shown', held.path.name)} (it came with the "
                "repository) has settings that widen what runs without asking:\n",
                style="yellow")
    for rule in held.allow:
        text.append("  allow ", style="bold")
        text.append(f"{rule}\n")
    for path in getattr(held, "dirs", []):  # the file tools would read and write there
        text.append("  additionalDirectories ", style="bold")
        text.append(f"{visible(path, one_line=True)}\n")
    if held.mode:
        text.append("  defaultMode ", style="bold")
        text.append(f"{held.mode}\n")
    for item in getattr(held, "sandbox", []):
        text.append("  ", style="bold")
        text.append(f"{item}\n")
    for part in held.parts.values():  # env: every command gets it (PATH, BASH_ENV, ...)
        for name, value in (part.get("env") or {}).items():
            text.append("  env ", style="bold")
            text.append(f"{name}={value}\n")
        if "statusLine" in part:
            text.append("  statusLine ", style="bold")
            text.append(f"{json.dumps(part['statusLine'])}\n")
    if hooks is not None:
        text.append("  hooks:\n", style="bold")
        for spec in hooks.specs:
            text.append(f"    {spec.event}", style="bold")
            if spec.matcher.strip() not in ("", "*"):
                text.append(f" [{spec.matcher}]")
            text.append(f"  {spec.command}\n", style="dim")
    text.append("Allowed commands run without a question; hooks run as you, outside the "
                "permission gate. Your answer is kept in agent-cli's private state (in .git/); "
                "changed settings are asked about again.", style="dim")
    return text


def held_rules(held: Any) -> Text:
    """/permissions: the repository's allow rules and mode that do not apply yet."""
    text = Text()
    shown = getattr(held, "shown", held.path.name)
    for rule in held.allow:
        text.append(f"allow {rule}  ({shown}: not trusted, not applied)\n", style="yellow")
    for path in getattr(held, "dirs", []):
        text.append(f"additional directory {visible(path, one_line=True)}  ({shown}: not "
                    "trusted, not added)\n", style="yellow")
    if held.mode:
        text.append(f"defaultMode {held.mode}  ({shown}: not trusted, not applied)\n",
                    style="yellow")
    for item in getattr(held, "sandbox", []):
        text.append(f"{item}  ({shown}: not trusted, not applied)\n", style="yellow")
    for part in held.parts.values():
        for name in part.get("env") or {}:
            text.append(f"env {name}  ({shown}: not trusted, not applied)\n", style="yellow")
    if held.hooks and not held.allow and not held.mode:
        text.append(f"hooks in {shown}: not trusted, not run (see /hooks)\n", style="yellow")
    return text


def ask_project_settings(runtime: Any, question: Callable[[Text, str], bool]) -> None:
    """Ask once about the repository's held settings; on yes, trust them and apply them now:
    the allow rules in the running policy, the hooks in the HookRunner, the mode unless a
    flag or a higher layer set one."""
    held = getattr(runtime, "held_settings", None)
    if held is None:
        return
    hooks = getattr(runtime, "held_hooks", None)
    if not question(settings_question(held, hooks), "Trust them? [y/N] "):
        return  # still held: SessionStart's warning line says so
    runtime.settings.trust_project = True  # trusted for this run whatever the disk says
    runtime.held_settings = None
    runtime.held_hooks = None
    runtime.policy.apply_trusted(held)
    if getattr(runtime, "sandbox", None) is not None:
        runtime.sandbox.update(runtime.sandbox_settings())  # now with the trusted parts
    if hooks is not None:
        runtime.hooks.add(hooks.specs)
    runtime.tool_env = runtime.settings.env()[0]  # the repository's env, now trusted
    _apply_mode(runtime)
    try:
        runtime.settings.trust(held)
    except (AgentCliError, OSError) as exc:  # trusted for this session; said, not fatal
        runtime.hook_warnings = [*runtime.hook_warnings, f"answer not saved: {exc}"]


def _apply_mode(runtime: Any) -> None:
    if getattr(runtime.config, "mode_from_flag", False):
        return
    from ..permissions.layers import usable

    loaded = usable(runtime.settings.loaded(), "mode")
    mode, _layer = runtime.settings.value("permissions", "defaultMode", loaded=loaded)
    if mode in (None, "bypassPermissions") or mode == runtime.policy.mode:
        return
    try:
        runtime.policy.set_mode(mode)
    except AgentCliError as exc:
        runtime.hook_warnings = [*runtime.hook_warnings, f"defaultMode {mode}: {exc}"]
