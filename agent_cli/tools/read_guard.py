"""What the file tools must not read: the Read rules as the tools meet files.

The gate decides on the path a call names; a search (grep, glob) meets files the call never
named, and a symlink or `sub/..` can name a file by another spelling. So the gate hands each
call a `ReadGuard` (ToolContext.read_guard) built from the Read deny and ask rules, and the
tools ask it about every file they are about to open or list, by the path they actually
reached (the confined walk's resolved path). A file it withholds is never opened, listed or
searched; the result says how many were withheld and by which rules, never their content.
"""

from __future__ import annotations

import os
import posixpath
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ..errors import ToolError
from .confined import kind_of, locate


class ReadGuard(Protocol):
    """Answers, for a root-relative path, the rule that withholds it ("" when none);
    `under(root)` is the same rules for paths below another root (an additional
    directory)."""

    def withheld(self, rel: str, is_dir: bool = False) -> str: ...

    def under(self, root: Path) -> ReadGuard: ...


@dataclass
class Withheld:
    """Files a search left out, and the rules that made it."""

    count: int = 0
    rules: list[str] = field(default_factory=list)

    def add(self, rule: str) -> None:
        self.count += 1
        if rule not in self.rules:
            self.rules.append(rule)

    def note(self, what: str) -> str:
        """One line for the result ("" when nothing was withheld)."""
        if not self.count:
            return ""
        plural = "s" if self.count != 1 else ""
        return (f"({self.count} {what}{plural} withheld by permission rule"
                f"{'s' if len(self.rules) > 1 else ''} {', '.join(self.rules)}: not shown)")


def check_readable(guard: ReadGuard | None, rel: str, is_dir: bool = False) -> None:
    """ToolError when `guard` withholds `rel` (the one file a call reads)."""
    if guard is None:
        return
    rule = guard.withheld(rel, is_dir)
    if rule:
        raise ToolError(f"Denied by rule {rule}: {rel} is not readable by the agent's tools.")


def spellings(root: Path, raw: str) -> list[tuple[str, bool]]:
    """The root-relative names a read of `raw` may reach, each with whether it is a
    directory: the path as written (normalized) and where the confined walk resolves it
    (symlinks followed inside the root). Paths the walk refuses are left to the tool."""
    out: list[tuple[str, bool]] = []
    text = os.path.expanduser(raw) if raw.startswith("~") else raw
    real = os.path.realpath(root)
    if os.path.isabs(text):
        text = os.path.relpath(os.path.normpath(text), real)
    written = posixpath.normpath(text.replace(os.sep, "/"))
    try:
        with locate(root, raw) as loc:
            mode = kind_of(loc)
            is_dir = mode is not None and stat.S_ISDIR(mode)
            out.append((loc.shown, is_dir))
    except ToolError:
        is_dir = False
    if not written.startswith("..") and all(written != s for s, _ in out):
        out.append((written, is_dir))
    return out
