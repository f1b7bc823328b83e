"""`/memory`: which project memory files were loaded at start (path, size), and what went
wrong with the others. It reads nothing new: the list is what the agents were given."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.table import Table
from rich.text import Text

from ..memory import MEMORY_NAMES


def _shown(path: Path, workdir: Path) -> str:
    try:
        return str(path.relative_to(workdir))
    except ValueError:
        home = Path.home()
        try:
            return "~/" + str(path.relative_to(home))
        except ValueError:
            return str(path)


def memory_report(memory: Any, workdir: Path) -> list[Any]:
    """Renderables for /memory: a table of the loaded files, then one line per warning."""
    out: list[Any] = []
    if not memory.files:
        out.append(Text(f"No memory files loaded (looked for {', '.join(MEMORY_NAMES)} from the "
                        "repository root down to the workdir, ~/.agent-cli/AGENTS.md and "
                        "~/.claude/CLAUDE.md).",
                        style="dim"))
    else:
        table = Table(title="Project memory", title_justify="left", show_edge=False,
                      pad_edge=False)
        for col in ("file", "size", "note"):
            table.add_column(col)
        for f in memory.files:
            notes = []
            if f.imported_by is not None:
                notes.append(f"imported by {_shown(f.imported_by, workdir)}")
            if f.truncated:
                notes.append("truncated to 40 KB")
            table.add_row(_shown(f.path, workdir), f"{f.size} B", "; ".join(notes))
        out.append(table)
        out.append(Text("(in the lead's and every teammate's system prompt)", style="dim"))
    for warning in memory.warnings:
        out.append(Text(f"warning: {warning}", style="yellow"))
    return out


def cmd_memory(ctx: Any, arg: str) -> None:
    for item in memory_report(ctx.runtime.memory, ctx.runtime.workdir):
        ctx.console.print(item)
