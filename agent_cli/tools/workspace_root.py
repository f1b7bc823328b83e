"""Workspace: where an agent's file tools and shell work right now.

`root` is the confinement root every path is resolved against (the workdir, or the worktree
of the task a teammate holds), `cwd` where its shell starts, `label` how approvals say where
("in task #3's worktree"; "" for the main tree), `extra` the additional directories the
file tools may also work in (tools/roots.py; the gate fills them in from the policy). Every
ToolContext carries one (`ctx.workspace`): the file tools work under its roots, the shell
starts in its cwd.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Workspace:
    root: Path
    cwd: Path
    label: str = ""
    task_id: int | None = None
    extra: tuple[Path, ...] = ()

    @classmethod
    def main(cls, workdir: Path) -> Workspace:
        return cls(Path(workdir), Path(workdir))
