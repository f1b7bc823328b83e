"""Additional working directories: `permissions.additionalDirectories` and `--add-dir DIR`.

Claude Code's file tools work in the workdir and in these directories. Each entry is a
directory path: absolute, `~/...` (your home) or relative (to the workdir for a settings
file, to the current directory for `--add-dir`). Every layer's list is gathered (user,
project, local, `.claude/` files alike) with its source; a repository's list (the project
file, a tracked local one) is a widening part, held until the human trusts it
(project_trust.py), so a planted `["/"]` or `["~"]` adds nothing until then. An entry that
is not a string or not an existing directory (a symlink to one counts: it is resolved here,
once, and the tools never follow a link out of it afterwards) is named at start and left out.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

KEY = "additionalDirectories"


@dataclass(frozen=True)
class ExtraDir:
    """One additional directory: its real path, as written, and where it came from."""

    path: Path
    written: str
    source: str  # "settings: .claude/settings.json" or "--add-dir"


def _resolve(raw: Any, base: Path) -> Path | str:
    """The real directory `raw` names, or why it cannot be one (a one-line reason)."""
    if not isinstance(raw, str) or not raw.strip() or "\x00" in raw:
        return "not a directory path"
    text = os.path.expanduser(raw) if raw.startswith("~") else raw
    if text.startswith("~"):
        return "only your own home directory is written ~/"
    real = os.path.realpath(os.path.join(base, text))
    if not os.path.isdir(real):
        return "no such directory"
    return Path(real)


def gather(loaded: list[tuple[Any, dict[str, Any]]], flags: list[str], workdir: Path,
           cwd: Path | None = None) -> tuple[list[ExtraDir], list[str]]:
    """(the additional directories of the effective layers then the flags, the start-up
    notes about entries left out). The workdir itself (or a directory inside it) is not
    added again."""
    found: list[ExtraDir] = []
    notes: list[str] = []
    rows: list[tuple[str, str, Any, Path]] = []
    for layer, data in loaded:
        perms = data.get("permissions")
        value = perms.get(KEY) if isinstance(perms, dict) else None
        if value is None:
            continue
        if not isinstance(value, list):
            notes.append(f"{layer.shown}: permissions.{KEY} is not a list; not applied")
            continue
        rows += [(layer.source, layer.shown, item, Path(workdir)) for item in value]
    rows += [("--add-dir", "--add-dir", item, Path(cwd or os.getcwd())) for item in flags]
    root = os.path.realpath(workdir)
    for source, shown, item, base in rows:
        got = _resolve(item, base)
        if isinstance(got, str):
            notes.append(f"{shown}: additional directory {str(item)!r}: {got}; not added")
            continue
        if _inside(root, str(got)) or any(d.path == got for d in found):
            continue
        found.append(ExtraDir(got, str(item), source))
    return found, notes


def _inside(root: str, path: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)
