"""The Read deny and ask rules of one call, as the gate and the file tools apply them.

`ReadRules` is the tools' ReadGuard (tools/read_guard.py): the gate builds one per call from
the policy's Read rules and puts it in the call's ToolContext; read_file, grep and glob ask
it about every file they reach, by the resolved path. Deny rules always withhold. Ask rules
withhold too (a search cannot stop to ask about each file it meets), except for the paths a
human approved for this call (the path the call named, and everything under it when it is
a directory).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .path_rules import PathTarget

if TYPE_CHECKING:
    from .policy import RuleEntry


class ReadRules:
    """The Read rules for one call under `roots` (the root the tools read under, then the
    workdir the rules are written for)."""

    def __init__(
        self, deny: list[RuleEntry], ask: list[RuleEntry], roots: tuple[Path, ...]
    ) -> None:
        self.deny = deny
        self.ask = ask
        self.roots = roots
        self._approved: list[str] = []

    def target(self, rel: str, is_dir: bool = False) -> PathTarget:
        return PathTarget.of(rel, self.roots, is_dir)

    def denying(self, rel: str, is_dir: bool = False) -> RuleEntry | None:
        target = self.target(rel, is_dir)
        return next((e for e in self.deny if e.parsed.matches("Read", target, "deny")), None)

    def asking(self, rel: str, is_dir: bool = False) -> RuleEntry | None:
        target = self.target(rel, is_dir)
        return next((e for e in self.ask if e.parsed.matches("Read", target, "deny")), None)

    def approve(self, rels: list[str]) -> None:
        """A human said yes to reading these (files, or directories and what is inside)."""
        self._approved += [r.strip("/") or "." for r in rels]

    def _is_approved(self, rel: str) -> bool:
        rel = rel.strip("/")
        return any(a == "." or rel == a or rel.startswith(a + "/") for a in self._approved)

    def withheld_path(self, path: Path) -> str:
        """The Read deny or ask rule with a path that covers `path` (absolute: project
        memory and its imports), or "". A bare `Read` rule does not keep your own
        instructions from the model; nobody is asked while memory loads."""
        import os

        base = os.path.realpath(self.roots[0])
        real = os.path.realpath(path)
        inside = real == base or real.startswith(base.rstrip("/") + "/")
        target = self.target(os.path.relpath(real, base)) if inside else PathTarget("", (real,))
        for entry in self.deny + self.ask:
            pattern = entry.parsed.path_pattern
            if pattern is None or (not inside and pattern.anchor == "workdir"):
                continue
            if pattern.matches(target):
                return entry.rule
        return ""

    def withheld(self, rel: str, is_dir: bool = False) -> str:
        """The rule keeping the tools from `rel`, "" when they may read it."""
        entry = self.denying(rel, is_dir)
        if entry is None and not self._is_approved(rel):
            entry = self.asking(rel, is_dir)
        return entry.rule if entry is not None else ""
