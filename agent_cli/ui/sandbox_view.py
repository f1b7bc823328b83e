"""`/sandbox`: whether the OS sandbox is available here (else the one command that installs
what is missing), its mode, and the resolved boundary of the lead and of each teammate."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from ..names import LEAD


def _workspaces(runtime: Any) -> list[tuple[str, Any]]:
    """(agent, workspace root) for the lead and every teammate on the roster."""
    out = [(LEAD, runtime.workdir)]
    try:
        names = [m.name for m in runtime.roster.members() if m.name != LEAD]
    except Exception:  # an unreadable roster: the lead's boundary is still worth showing
        names = []
    for name in names:
        root = runtime.workdir
        try:
            ws = runtime.worktrees.workspace_for(name)
            if ws is not None:
                root = ws.root
        except Exception:
            pass
        out.append((name, root))
    return out


def sandbox_report(runtime: Any) -> Text:
    """The whole /sandbox text."""
    box = runtime.sandbox
    text = Text()
    avail = box.availability if box.enabled else None
    if avail is None:
        from ..sandbox.bwrap import probe

        avail = probe()
    if avail.ok:
        text.append("available: yes (bubblewrap)\n", style="green")
    else:
        text.append(f"available: no: {avail.why}\n", style="yellow")
        if avail.fix:
            text.append(f"  install: {avail.fix}\n", style="bold")
    text.append(f"mode: {box.mode_line()}\n")
    if not box.enabled:
        text.append("turn it on: \"sandbox\": {\"enabled\": true} in a settings file, or "
                    "--sandbox for one run\n", style="dim")
        return text
    for agent, root in _workspaces(runtime):
        text.append(f"{agent}:\n", style="bold")
        for line in box.boundary(root).describe():
            text.append(f"  {line}\n")
    return text


def cmd_sandbox(ctx: Any, arg: str) -> None:
    console: Console = ctx.console
    console.print(sandbox_report(ctx.runtime))
