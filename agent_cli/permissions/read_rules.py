"""The Read deny and ask rules of one call, as the gate and the file tools apply them.

`ReadRules` is the tools' ReadGuard (tools/read_guard.py): the gate builds one per call from
the policy's Read rules and puts it in the call's ToolContext; read_file, grep and glob ask
it about every file they reach, by the resolved path. Deny rules always withhold. Ask rules
withhold too (a search cannot stop to ask about each file it meets), except for the paths a
human approved for this call (the path the call named, and everything under it when it is
a directory).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from .path_rules import PathTarget, bases_of

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
        self._bases = bases_of(roots)
        self._approved: list[str] = []
        self._quick = {"deny": _Quick(deny, self._bases), "ask": _Quick(ask, self._bases)}
        self._under: dict[str, ReadRules] = {}

    def under(self, root: Path) -> ReadRules:
        """The same rules for files below `root` (an additional directory): a rule's
        relative path is matched below it as below the workdir, `~/` and `//` by the
        absolute path. Kept per root, so an approval there stays there."""
        key = os.path.realpath(root)
        if key not in self._under:
            self._under[key] = ReadRules(self.deny, self.ask, (Path(key),))
        return self._under[key]

    def target(self, rel: str, is_dir: bool = False) -> PathTarget:
        return PathTarget.under(rel, self._bases, is_dir)

    def _first(self, effect: str, rel: str, is_dir: bool) -> RuleEntry | None:
        entries = self.deny if effect == "deny" else self.ask
        if not entries or self._quick[effect].misses(rel, is_dir):
            return None
        target = self.target(rel, is_dir)
        return next((e for e in entries if e.parsed.matches("Read", target, "deny")), None)

    def denying(self, rel: str, is_dir: bool = False) -> RuleEntry | None:
        return self._first("deny", rel, is_dir)

    def asking(self, rel: str, is_dir: bool = False) -> RuleEntry | None:
        return self._first("ask", rel, is_dir)

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


class _Quick:
    """A fast "certainly no match" for a search meeting thousands of files: the rules'
    gitignore patterns (as pathspec compiles them) joined into one regex per anchor, tried
    on the path below each root that lies under the anchor; a bare rule always goes to the
    full check."""

    def __init__(self, entries: list[RuleEntry], bases: tuple[str, ...]) -> None:
        import pathspec

        patterns = [e.parsed.path_pattern for e in entries]
        self.exact = any(p is None for p in patterns)
        home = os.path.expanduser("~").rstrip("/") + "/"
        self.checks: list[tuple[str, re.Pattern[str]]] = []  # (prefix before rel, regex)
        for anchor, base in (("workdir", ""), ("home", home), ("root", "/")):
            lines = [p.pattern for p in patterns if p is not None and p.anchor == anchor]
            if not lines:
                continue
            spec = pathspec.GitIgnoreSpec.from_lines(lines)
            regex = re.compile("|".join(
                f"(?:{p.regex.pattern.replace('(?P<ps_d>', '(?:')})"
                for p in spec.patterns if p.include and p.regex is not None))
            if not base:
                self.checks.append(("", regex))
                continue
            for root in bases:
                full = root.rstrip("/") + "/"
                if full.startswith(base):
                    self.checks.append((full[len(base):], regex))

    def misses(self, rel: str, is_dir: bool) -> bool:
        if self.exact:
            return False
        rel = rel.strip("/")
        if rel in ("", "."):
            return True
        if "/." in "/" + rel and ("/./" in "/" + rel + "/" or "/../" in "/" + rel + "/"):
            return False  # not a normalized path: leave it to the full check
        tail = "/" if is_dir else ""
        return not any(regex.match(prefix + rel + tail) for prefix, regex in self.checks)
