"""The permission policy of a session: the mode and every allow/deny rule with its source.

Rules come from `.agent-cli/settings.json`, the `--allow` / `--deny` flags, and the session
("allow always" answers). Each rule is parsed when it arrives, so an invalid one is a one-line
UserError at load time, never a surprise at call time. Thread-safe: teammates consult the
policy while the UI thread changes the mode or adds rules.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, cast

from ..errors import UserError
from .rules import InvalidRule, Rule, parse_rule
from .settings import default_settings_path, load_rules, update_rule
from .shell_analysis import analyze
from .shell_verdict import ShellVerdict, judge

Mode = Literal["default", "acceptEdits", "plan", "bypassPermissions"]
Effect = Literal["allow", "deny"]
MODES: tuple[str, ...] = ("default", "acceptEdits", "plan", "bypassPermissions")
SESSION = "session"


@dataclass(frozen=True)
class RuleEntry:
    """A rule as the user sees it in /permissions: its text, effect and where it came from."""

    rule: str
    effect: Effect
    source: str
    parsed: Rule


class PermissionPolicy:
    """Mode + rules. Build once per session (Runtime does)."""

    def __init__(
        self,
        workdir: Path,
        mode: str = "default",
        allow: tuple[str, ...] | list[str] = (),
        deny: tuple[str, ...] | list[str] = (),
        settings_path: Path | None = None,
        allow_bypass: bool = False,
    ) -> None:
        self.workdir = Path(workdir)
        self.settings_path = Path(settings_path or default_settings_path(self.workdir))
        self.allow_bypass = allow_bypass
        self._lock = threading.RLock()
        self._entries: list[RuleEntry] = []
        self._mode: Mode = "default"
        self.set_mode(mode)
        self._load_settings()
        for effect, texts, source in (("allow", allow, "--allow"), ("deny", deny, "--deny")):
            for text in texts:
                self._entries.append(self._entry(text, cast(Effect, effect), source))

    # ----- sources -----------------------------------------------------------------
    @property
    def settings_source(self) -> str:
        try:
            shown = self.settings_path.relative_to(self.workdir)
        except ValueError:
            shown = self.settings_path
        return f"settings: {shown}"

    def _entry(self, text: str, effect: Effect, source: str) -> RuleEntry:
        if effect not in ("allow", "deny"):
            raise UserError(f"invalid rule effect {effect!r}: use allow or deny")
        try:
            parsed = parse_rule(text)
        except InvalidRule as exc:
            where = f"{self.settings_path}: " if source.startswith("settings") else ""
            raise InvalidRule(f"{where}{exc}") from exc
        return RuleEntry(parsed.text, effect, source, parsed)

    def _load_settings(self) -> None:
        rules = load_rules(self.settings_path)
        source = self.settings_source
        for effect in ("allow", "deny"):
            for text in rules[effect]:
                self._entries.append(self._entry(text, cast(Effect, effect), source))

    # ----- mode -----------------------------------------------------------------------
    @property
    def mode(self) -> Mode:
        with self._lock:
            return self._mode

    def set_mode(self, mode: str) -> Mode:
        if mode not in MODES:
            raise UserError(f"unknown permission mode {mode!r} (use one of {', '.join(MODES)})")
        if mode == "bypassPermissions" and not self.allow_bypass:
            raise UserError("bypassPermissions needs --dangerously-skip-permissions")
        with self._lock:
            self._mode = cast(Mode, mode)
            return self._mode

    def cycle_mode(self) -> Mode:
        """default -> acceptEdits -> plan -> (bypassPermissions if allowed) -> default."""
        order = [m for m in MODES if m != "bypassPermissions" or self.allow_bypass]
        with self._lock:
            current = self._mode
            nxt = order[(order.index(current) + 1) % len(order)] if current in order else order[0]
            self._mode = cast(Mode, nxt)
            return self._mode

    # ----- rules ------------------------------------------------------------------------
    def rules(self) -> list[RuleEntry]:
        with self._lock:
            return list(self._entries)

    def add_rule(
        self, rule: str, effect: str = "allow", source: str = SESSION, save: bool = False
    ) -> RuleEntry:
        """Add a rule (session by default); save=True also writes it to settings.json."""
        if save:
            source = self.settings_source
        entry = self._entry(rule, cast(Effect, effect), source)
        with self._lock:
            if save:
                update_rule(self.settings_path, entry.rule, effect, present=True)
                # Saving promotes a session rule: it is listed once, from settings.json.
                self._entries = [
                    e
                    for e in self._entries
                    if (e.rule, e.effect, e.source) != (entry.rule, entry.effect, SESSION)
                ]
            for existing in self._entries:
                if (existing.rule, existing.effect, existing.source) == (
                    entry.rule,
                    entry.effect,
                    entry.source,
                ):
                    return existing
            self._entries.append(entry)
            return entry

    def remove_rule(self, rule: str, effect: str = "allow") -> bool:
        """Remove every copy of the rule (session, flags and settings.json); True if any."""
        text = rule.strip()
        with self._lock:
            removed = update_rule(self.settings_path, text, effect, present=False)
            keep = [e for e in self._entries if (e.rule, e.effect) != (text, effect)]
            removed = removed or len(keep) != len(self._entries)
            self._entries = keep
            return removed

    def find(self, effect: str, permission: str, target: str) -> RuleEntry | None:
        """The first rule of `effect` that decides a call of kind `permission` on `target`
        (for Bash, the rule judge_shell names when it allows or denies)."""
        if permission == "Bash":
            verdict = self.judge_shell(target)
            return verdict.entry if verdict.effect == effect else None
        for entry in self.rules():
            if entry.effect == effect and entry.parsed.matches(permission, target, effect):
                return entry
        return None

    def judge_shell(self, command: str) -> ShellVerdict:
        """Allow, deny or ask for a shell command line under the Bash rules (shell_verdict)."""
        entries = [e for e in self.rules() if e.parsed.covers("Bash", e.effect)]
        allows = [e for e in entries if e.effect == "allow"]
        denies = [e for e in entries if e.effect == "deny"]
        return judge(analyze(command), allows, denies)
