"""`/hooks`: the hooks this session runs (read from the settings layers at start): event,
matcher, command, timeout and layer (claude-project is .claude/settings.json, ...), then
the warnings about hooks that will not run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.table import Table
from rich.text import Text


def hooks_report(specs: list[Any], warnings: list[str], held: Sequence[Any] = ()
                 ) -> list[Any]:
    """The table of hooks that run (then `held` ones, marked not trusted) and the warnings."""
    out: list[Any] = []
    if not specs and not held:
        out.append(Text("No hooks configured (\"hooks\" in ~/.agent-cli/settings.json, "
                        ".agent-cli/settings.json, .agent-cli/settings.local.json or the "
                        "same files under ~/.claude/ and .claude/).", style="dim"))
    else:
        table = Table(title="Hooks (read at start)", title_justify="left", show_edge=False,
                      pad_edge=False)
        for col in ("event", "matcher", "command", "timeout", "layer"):
            table.add_column(col)
        for s in specs:
            table.add_row(s.event, s.matcher or "*", s.command, f"{s.timeout_s:g}s", s.layer)
        for s in held:
            table.add_row(s.event, s.matcher or "*", s.command, f"{s.timeout_s:g}s",
                          f"{s.layer}: not trusted, not run", style="dim")
        out.append(table)
    out += [Text(f"warning: {w}", style="yellow") for w in warnings]
    return out


def cmd_hooks(ctx: Any, arg: str) -> None:
    hooks = getattr(ctx.runtime, "hooks", None)
    specs = list(hooks.specs) if hooks is not None else []
    held = getattr(ctx.runtime, "held_hooks", None)
    held_specs = list(held.specs) if held is not None else []
    for item in hooks_report(specs, list(getattr(ctx.runtime, "hook_warnings", [])), held_specs):
        ctx.console.print(item)
