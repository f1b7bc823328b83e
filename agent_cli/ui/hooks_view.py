"""`/hooks`: the hooks this session runs (read from the settings layers at start): event,
matcher, command, timeout and layer, then the warnings about hooks that will not run."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text


def hooks_report(specs: list[Any], warnings: list[str]) -> list[Any]:
    out: list[Any] = []
    if not specs:
        out.append(Text("No hooks configured (\"hooks\" in ~/.agent-cli/settings.json, "
                        ".agent-cli/settings.json or .agent-cli/settings.local.json).",
                        style="dim"))
    else:
        table = Table(title="Hooks (read at start)", title_justify="left", show_edge=False,
                      pad_edge=False)
        for col in ("event", "matcher", "command", "timeout", "layer"):
            table.add_column(col)
        for s in specs:
            table.add_row(s.event, s.matcher or "*", s.command, f"{s.timeout_s:g}s", s.layer)
        out.append(table)
    out += [Text(f"warning: {w}", style="yellow") for w in warnings]
    return out


def cmd_hooks(ctx: Any, arg: str) -> None:
    hooks = getattr(ctx.runtime, "hooks", None)
    specs = list(hooks.specs) if hooks is not None else []
    warnings = list(getattr(ctx.runtime, "hook_warnings", []))
    held = getattr(ctx.runtime, "held_hooks", None)
    if held is not None:
        from ..permissions.hooks import held_warning

        warnings.append(held_warning(held))
    for item in hooks_report(specs, warnings):
        ctx.console.print(item)
