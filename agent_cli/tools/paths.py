"""Workdir confinement: every path a file tool touches is resolved here first.

`resolve_path(workdir, raw)` returns the real path (symlinks resolved) or raises ToolError
with a one-line reason: a NUL byte, an over-long path or name, `..` or an absolute path
leading outside the workdir, or a symlink anywhere in the path (the last component included,
so a write never follows a link out) whose target is outside. `display_path` is the
workdir-relative POSIX form used in results and in permission rules.

This module decides (the gate's target, the names shown); the file tools then do the work
through tools.confined, which walks the path again relative to directory fds with O_NOFOLLOW
on every component, so a symlink swapped in between the check and the write (or read) can
never send it outside the root.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import ToolError

MAX_PATH_CHARS = 4096
MAX_NAME_BYTES = 255


def _shown(raw: str) -> str:
    return raw if len(raw) <= 80 else raw[:60] + "..." + raw[-10:]


def _inside(root: str, path: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def check_path_text(raw: object) -> str:
    """The raw path as a usable string, or ToolError (type, NUL, empty, too long)."""
    if not isinstance(raw, str):
        raise ToolError(f"path must be a string, not {type(raw).__name__}")
    if "\x00" in raw:
        raise ToolError(f"path {_shown(raw)!r} contains a NUL byte")
    if not raw.strip():
        raise ToolError("path is empty")
    if len(raw) > MAX_PATH_CHARS:
        raise ToolError(f"path is too long ({len(raw)} characters; the limit is {MAX_PATH_CHARS})")
    for part in raw.split("/"):
        if len(part.encode("utf-8", "surrogateescape")) > MAX_NAME_BYTES:
            raise ToolError(f"path {_shown(raw)} has a name longer than {MAX_NAME_BYTES} bytes")
    return raw


def resolve_path(workdir: Path, raw: object) -> Path:
    """The real, absolute path of `raw` inside `workdir`, or ToolError saying why not."""
    text = check_path_text(raw)
    root = os.path.realpath(workdir)
    expanded = os.path.expanduser(text) if text.startswith("~") else text
    joined = os.path.join(root, expanded)  # an absolute `expanded` replaces root
    if not _inside(root, os.path.normpath(joined)):
        raise ToolError(f"path {_shown(text)} is outside the workdir")
    real = os.path.realpath(joined)
    if not _inside(root, real):
        raise ToolError(f"path {_shown(text)} leads outside the workdir through a symlink")
    return Path(real)


def display_path(workdir: Path, path: Path) -> str:
    """`path` relative to the workdir, POSIX style ("." for the workdir itself)."""
    root = os.path.realpath(workdir)
    rel = os.path.relpath(os.path.realpath(path), root)
    return Path(rel).as_posix()


def relative_target(workdir: Path, raw: object) -> str:
    """resolve_path + display_path: the form permission rules are matched against."""
    return display_path(workdir, resolve_path(workdir, raw))
