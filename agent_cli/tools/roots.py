"""Which root a file tool's path is walked from: the workspace root or an additional directory.

A path that lands inside the workspace root (as written, `..` and `~` worked out on the text)
is the root's, exactly as before, and so is one that reaches the workspace root through an
additional directory (a link there, or a directory above the workdir): its rules, its
protected folders and its names apply. One that lands inside an additional directory
(`permissions.additionalDirectories`, `--add-dir`) is walked from that directory with the
same confinement (tools.confined: O_NOFOLLOW on every component, a symlink never followed
out of it), and named by its absolute path in results. Anything else stays with the
workspace root, whose walk refuses it ("outside the workdir"). Choosing a root on the text
can only pick where the confined walk starts; it never widens what that walk allows.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import ToolError
from .paths import check_path_text
from .read_guard import ReadGuard
from .workspace_root import Workspace


@dataclass(frozen=True)
class Rooted:
    """A tool's path placed under one root: the root to walk from, the path to walk there,
    and the prefix results are named with ("" for the workspace root, else the additional
    directory's absolute path)."""

    root: Path
    raw: str
    base: str = ""

    @property
    def extra(self) -> bool:
        return bool(self.base)

    def name(self, rel: str) -> str:
        """How a result names `rel` (a path below this root)."""
        if not self.base:
            return rel
        rel = rel.strip("/")
        return self.base if rel in ("", ".") else f"{self.base.rstrip('/')}/{rel}"

    def guard(self, guard: ReadGuard | None) -> ReadGuard | None:
        """The Read rules as they apply below this root."""
        if guard is None or not self.base:
            return guard
        return guard.under(self.root)


def _inside(root: str, path: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def place(ws: Workspace, raw: object) -> Rooted:
    """The root `raw` is walked from (see the module docstring); ToolError for bad text."""
    text = check_path_text(raw)
    if not ws.extra:
        return Rooted(ws.root, text)
    root = os.path.realpath(ws.root)
    expanded = os.path.expanduser(text) if text.startswith("~") else text
    full = os.path.normpath(os.path.join(root, expanded))
    if _inside(root, full):
        return Rooted(ws.root, text)
    for extra in ws.extra:
        base = os.path.realpath(extra)
        if _inside(base, full):
            real = os.path.realpath(full)
            if _inside(root, real):  # the workspace's own file by another way: its rules
                return Rooted(ws.root, os.path.relpath(real, root))
            return Rooted(Path(base), os.path.relpath(full, base), base)
    return Rooted(ws.root, text)


def writable(ws: Workspace, where: Rooted) -> None:
    """A teammate in a task's worktree writes its worktree only: a write into an
    additional directory would skip the task's landing."""
    if where.extra and ws.task_id is not None:
        raise ToolError(
            f"Refused: {where.name(where.raw)} is in an additional directory, outside task "
            f"#{ws.task_id}'s worktree: a change there would skip the landing. Read it here; "
            "ask the lead (who works in the main tree) to change it.")
