"""`/agents`: the teammate types from agent definitions (.claude/agents, ~/.claude/agents):
name, description, tools, model and file, and the files that could not be read."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text

from ..team.agent_types import agent_types
from .memory_view import _shown


def cmd_agents(ctx: Any, arg: str) -> None:
    found = agent_types(ctx.runtime)
    if not found.types:
        ctx.console.print(Text("No agent types: add .claude/agents/NAME.md (or "
                               "~/.claude/agents/NAME.md) with name, description, tools and "
                               "model in its frontmatter.", style="dim"))
    else:
        table = Table(title="Agent types (spawn a teammate with the type as its role)",
                      title_justify="left", show_edge=False, pad_edge=False)
        for col in ("type", "description", "tools", "model", "file"):
            table.add_column(col)
        for kind in found.types.values():  # a file's text is data: Text, never markup
            tools = ", ".join(kind.tools) if kind.tools is not None else "all"
            table.add_row(Text(kind.name), Text(kind.description), Text(tools),
                          Text(kind.model or "session's"),
                          Text(_shown(kind.path, ctx.runtime.workdir)))
        ctx.console.print(table)
    for problem in found.problems:
        ctx.console.print(Text(f"not loaded: {problem}", style="yellow"))
