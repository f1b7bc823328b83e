"""What of Claude Code's settings files agent-cli does not honour, said once at start.

A `.claude/settings.json` (user, project or local) is read as a settings layer (layers.py).
The keys agent-cli gives a meaning are listed in HONOURED; every other key of a `.claude/`
file, a `model` or `defaultMode` it cannot use, and every rule about a tool agent-cli does not
have (`Task`, `NotebookEdit`, ...; rules.Rule.applicable) is named in one line per file, so
nothing a Claude Code user configured is dropped without a word. agent-cli's own files are
not checked here: their keys are agent-cli's.
"""

from __future__ import annotations

from typing import Any

from .layers import SettingsLayers, claude_mode_usable, claude_model

MCP_KEYS = ("enableAllProjectMcpServers", "enabledMcpjsonServers", "disabledMcpjsonServers")
HONOURED = frozenset({
    "$schema", "permissions", "hooks", "env", "model", "sandbox", *MCP_KEYS,
    "includeCoAuthoredBy", "statusLine", "cleanupPeriodDays",
})
PERMISSION_KEYS = frozenset({"allow", "deny", "ask", "defaultMode", "additionalDirectories"})


def settings_notes(layers: SettingsLayers, policy: Any = None) -> list[str]:
    """One line per `.claude/` file with what agent-cli does not honour in it, then one per
    rule source with the rules that are not applicable here."""
    notes: list[str] = []
    for layer, data in layers.raw_loaded():
        if not layer.claude or not data:
            continue
        skipped = [key for key in data if key not in HONOURED]
        if layer.kind == "project" or layers.foreign_local(layer):  # never its own servers
            skipped += [f"{key} (a repository's file)" for key in MCP_KEYS if key in data]
        perms = data.get("permissions")
        if isinstance(perms, dict):
            skipped += [f"permissions.{k}" for k in perms if k not in PERMISSION_KEYS]
            mode = perms.get("defaultMode")
            if mode is not None and not claude_mode_usable(mode):
                skipped.append(f"permissions.defaultMode {mode!r}"
                               + (" (needs --dangerously-skip-permissions here)"
                                  if mode == "bypassPermissions" else ""))
        if "model" in data and claude_model(data["model"]) is None:
            skipped.append(f"model {data['model']!r} (not a Claude model name)")
        if skipped:
            notes.append(f"{layer.shown}: not honoured by agent-cli: {', '.join(skipped)}")
    if policy is not None:
        notes += _not_applicable(policy)
    return notes


def _not_applicable(policy: Any) -> list[str]:
    from .rules import UNREADABLE

    by_source: dict[str, list[str]] = {}
    notes: list[str] = []
    for entry in policy.not_applicable():
        where = entry.source.removeprefix("settings: ")
        if entry.parsed.family == UNREADABLE:
            notes.append(f"{where}: {entry.effect} rule not enforced here: {entry.parsed.spec}")
            continue
        by_source.setdefault(where, []).append(f"{entry.effect} {entry.rule}")
    return [f"{where}: rules kept but not applicable here (agent-cli has no such tool): "
            f"{', '.join(rules)}" for where, rules in by_source.items()] + notes
