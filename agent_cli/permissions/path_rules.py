"""The path specifier of a Read / Edit / Write rule, as Claude Code reads it.

Patterns follow the gitignore rules (pathspec's GitIgnoreSpec does the matching): a pattern
with no slash but at its end matches at any depth (`.env`, `*.pem`), one with a slash is
anchored (`docs/*.md`), `*` and `?` stay in one directory, `**` crosses directories, a
trailing `/` names a directory, and a matched directory covers everything inside it. Four
anchors, as in Claude Code's documentation:

- `path` or `./path` — relative to the workdir (the `./` is dropped, so `./.env` is `.env`:
  a `.env` at any depth);
- `/path` — relative to the project root (the workdir: that is where agent-cli's settings
  live), anchored there;
- `~/path` — relative to your home directory;
- `//path` — an absolute path from the filesystem root.

A file is matched by its path relative to the root it is read under (the workdir, or a
task's worktree, which mirrors it), and for `~/` and `//` patterns by its absolute path,
both as it is and as its counterpart in the workdir (so a rule naming `~/proj/.env` covers
the copy in a task's worktree too).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

Anchor = Literal["workdir", "home", "root"]


class BadPathPattern(ValueError):
    """A path specifier that cannot be a rule (the message says why, in one line)."""


@dataclass(frozen=True)
class PathTarget:
    """A file as the rules see it: `rel` below the root it is read under (POSIX, "." for the
    root itself, a trailing "/" for a directory) and its absolute spellings."""

    rel: str
    absolute: tuple[str, ...] = ()

    @classmethod
    def of(cls, rel: str, roots: tuple[Path, ...] = (), is_dir: bool = False) -> PathTarget:
        """`rel` under each root in `roots` (the root it is read under, then the workdir)."""
        return cls.under(rel, bases_of(roots), is_dir)

    @classmethod
    def under(cls, rel: str, bases: tuple[str, ...], is_dir: bool = False) -> PathTarget:
        """`of` with the roots' spellings already worked out (bases_of): no system call."""
        rel = rel.strip("/") or "."
        spellings: list[str] = []
        for base in bases:
            full = os.path.normpath(os.path.join(base, rel))
            if full not in spellings:
                spellings.append(full)
        shown = rel + "/" if is_dir and rel != "." else rel
        return cls(shown, tuple(spellings))


def bases_of(roots: tuple[Path, ...]) -> tuple[str, ...]:
    """Each root as given and with its symlinks resolved, without repeats."""
    out: list[str] = []
    for root in roots:
        for base in (str(root), os.path.realpath(root)):
            if base not in out:
                out.append(base)
    return tuple(out)


@dataclass(frozen=True)
class PathPattern:
    """One rule's path specifier: the anchor and the gitignore pattern below it."""

    text: str
    anchor: Anchor
    pattern: str

    @cached_property
    def _spec(self) -> Any:
        import pathspec

        return pathspec.GitIgnoreSpec.from_lines([self.pattern])

    def matches(self, target: PathTarget | str, home: str | None = None) -> bool:
        """Does the pattern cover `target` (a PathTarget, or a workdir-relative path)?"""
        if isinstance(target, str):
            target = PathTarget.of(target)
        if self.anchor == "workdir":
            return target.rel != "." and bool(self._spec.match_file(target.rel))
        base = "/" if self.anchor == "root" else (home or os.path.expanduser("~"))
        base = base.rstrip("/") + "/"
        for full in target.absolute:
            if full.startswith(base):
                below = full[len(base):] + ("/" if target.rel.endswith("/") else "")
                if below and self._spec.match_file(below):
                    return True
        return False


def parse_path_pattern(spec: str) -> PathPattern:
    """A rule's path specifier, or BadPathPattern saying why not."""
    if any(ord(c) < 32 or ord(c) == 127 for c in spec):
        raise BadPathPattern("control characters in the path")
    if spec.startswith("//"):
        anchor: Anchor = "root"
        pattern = "/" + spec.lstrip("/")
    elif spec.startswith("~/"):
        anchor, pattern = "home", spec[1:]
    elif spec.startswith("~"):
        raise BadPathPattern("only your own home directory is written ~/ (not ~user)")
    elif spec.startswith("/"):
        anchor, pattern = "workdir", spec
    else:
        anchor = "workdir"
        pattern = spec
        while pattern.startswith("./"):
            pattern = pattern[2:]
    if ".." in pattern.split("/"):
        raise BadPathPattern("'..' has no meaning in a path pattern (use //, ~/ or /)")
    if pattern.strip("/") in ("", "."):
        raise BadPathPattern("the pattern names no file (write the tool alone for every file)")
    if pattern.startswith("!"):
        raise BadPathPattern("a rule cannot negate ('!'); write a deny or allow rule instead")
    if pattern.startswith("#"):
        pattern = "\\" + pattern  # a file named '#x', not a gitignore comment
    return PathPattern(spec, anchor, pattern)
