"""The permission policy of a session: the mode and every allow/deny rule with its source.

Rules come from the settings layers (user, project, local: layers.py), the `--allow` /
`--deny` flags, and the session ("allow always" answers); saving writes the local layer.
Effects: allow, deny and ask (an ask rule makes a call ask even where an allow rule
matches). Each rule is parsed when it arrives, so an invalid one is a one-line UserError at
load time, never a surprise at call time. Thread-safe: teammates consult the
policy while the UI thread changes the mode or adds rules.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from ..errors import UserError
from .extra_dirs import ExtraDir
from .layers import SettingsLayers
from .path_rules import PathTarget
from .settings import update_rule

if TYPE_CHECKING:  # the rule parser and tree-sitter: loaded at the first rule or command
    from .read_rules import ReadRules
    from .rules import Rule
    from .shell_verdict import ShellVerdict

Mode = Literal["default", "acceptEdits", "plan", "bypassPermissions"]
Effect = Literal["allow", "deny", "ask"]
EFFECTS: tuple[str, ...] = ("allow", "deny", "ask")
MODES: tuple[str, ...] = ("default", "acceptEdits", "plan", "bypassPermissions")
SESSION = "session"


@dataclass(frozen=True)
class RuleEntry:
    """A rule as the user sees it in /permissions: its text, effect and where it came from."""

    rule: str
    effect: Effect
    source: str
    parsed: Rule
    layer: str = ""  # user / project / local / flag / session


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
        layers: SettingsLayers | None = None,
        add_dirs: tuple[str, ...] | list[str] = (),
    ) -> None:
        self.workdir = Path(workdir)
        self.layers = layers or SettingsLayers(self.workdir)
        self.settings_path = Path(settings_path or self.layers.local.path)  # where saves go
        self.allow_bypass = allow_bypass
        self._lock = threading.RLock()
        self._entries: list[RuleEntry] = []
        self._mode: Mode = "default"
        self._add_dirs = list(add_dirs)
        self._extra: list[ExtraDir] = []
        self.dir_notes: list[str] = []  # additional directories left out, said at start
        self.set_mode(mode)
        self._load_settings()
        self._load_dirs()
        for effect, texts, source in (("allow", allow, "--allow"), ("deny", deny, "--deny")):
            for text in texts:
                self._entries.append(self._entry(text, cast(Effect, effect), source, "flag"))

    # ----- sources -----------------------------------------------------------------
    @property
    def settings_source(self) -> str:
        try:
            shown = self.settings_path.relative_to(self.workdir)
        except ValueError:
            shown = self.settings_path
        return f"settings: {shown}"

    def _entry(
        self, text: str, effect: Effect, source: str, layer: str = "", path: Path | None = None
    ) -> RuleEntry:
        if effect not in EFFECTS:
            raise UserError(f"invalid rule effect {effect!r}: use allow, deny or ask")
        from .rules import InvalidRule, parse_rule, unreadable_rule

        try:
            parsed = parse_rule(text)
        except InvalidRule as exc:
            if layer.startswith("claude-") and isinstance(text, str):  # never stops the start
                parsed = unreadable_rule(text, str(exc))
                return RuleEntry(parsed.text, effect, source, parsed, layer)
            where = f"{path or self.settings_path}: " if source.startswith("settings") else ""
            raise InvalidRule(f"{where}{exc}") from exc
        return RuleEntry(parsed.text, effect, source, parsed, layer or self._layer_of(source))

    def _load_settings(self) -> None:
        held = self.layers.held()
        for name, parts in held.parts.items() if held is not None else ():
            layer = self.layers.layer(name)
            for text in parts.get("allow") or []:  # held, but a bad rule is still said
                self._entry(text, "allow", layer.source, layer.name, layer.path)
        for layer, data in self.layers.loaded():
            perms = data.get("permissions", {})
            for effect in EFFECTS:
                for text in perms.get(effect, []):
                    self._entries.append(
                        self._entry(text, cast(Effect, effect), layer.source, layer.name,
                                    layer.path)
                    )

    def _load_dirs(self) -> None:
        from .extra_dirs import gather

        extra, notes = gather(self.layers.loaded(), self._add_dirs, self.workdir)
        with self._lock:
            self._extra, self.dir_notes = extra, notes

    def extra_dirs(self) -> list[ExtraDir]:
        """The additional directories the file tools may work in (besides the workdir)."""
        with self._lock:
            return list(self._extra)

    def apply_trusted(self, held: Any) -> None:
        """The human trusted the repository's held settings: their allow rules and
        additional directories apply now."""
        if held.dirs:
            from .extra_dirs import gather

            raw = self.layers.raw_loaded()  # trusted now: every layer as written
            extra, notes = gather(raw, self._add_dirs, self.workdir)
            with self._lock:
                self._extra, self.dir_notes = extra, notes
        with self._lock:
            for name, parts in held.parts.items():
                layer = self.layers.layer(name)
                for text in parts.get("allow") or []:
                    self._entries.append(self._entry(text, "allow", layer.source, layer.name,
                                                     layer.path))

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
                self._save(entry.rule, effect)
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
            removed = self.layers.remove_rule(text, effect)
            if self.settings_path != self.layers.local.path:
                removed = update_rule(self.settings_path, text, effect, present=False) or removed
            keep = [e for e in self._entries if (e.rule, e.effect) != (text, effect)]
            removed = removed or len(keep) != len(self._entries)
            self._entries = keep
            return removed

    def find(self, effect: str, permission: str, target: str | PathTarget) -> RuleEntry | None:
        """The first rule of `effect` that decides a call of kind `permission` on `target`
        (for Bash, the rule judge_shell names when it allows or denies). An ask rule is
        matched as broadly as a deny rule (any part of a compound command, and whatever the
        analysis cannot prove free of its match)."""
        if permission == "Bash" and isinstance(target, str):
            if effect == "ask":
                return self._ask_shell(target)[0]
            verdict = self.judge_shell(target)
            return verdict.entry if verdict.effect == effect else None
        how = "deny" if effect == "ask" else effect
        for entry in self.rules():
            if entry.effect == effect and entry.parsed.matches(permission, target, how):
                return entry
        return None

    def search_rule(self, tool: str) -> RuleEntry | None:
        """A bare `Glob` / `Grep` deny rule (else ask rule) for the glob / grep tool; asks
        count for nothing in bypassPermissions."""
        from .rules import SEARCH_TOOLS

        hits = [e for e in self.rules() if SEARCH_TOOLS.get(e.parsed.family) == tool
                and e.parsed.spec is None and e.effect != "allow"]
        if self.mode == "bypassPermissions":
            hits = [e for e in hits if e.effect == "deny"]
        return next((e for e in hits if e.effect == "deny"), hits[0] if hits else None)

    def not_applicable(self) -> list[RuleEntry]:
        """Rules about tools agent-cli does not have (Task, Agent, NotebookEdit, ...)."""
        return [e for e in self.rules() if not e.parsed.applicable]

    def read_rules(self, roots: tuple[Path, ...]) -> ReadRules | None:
        """The Read deny and ask rules for one call under `roots` (None when there are none:
        reading is then free). In bypassPermissions nothing asks: deny rules only."""
        skip = ("allow", "ask") if self.mode == "bypassPermissions" else ("allow",)  # no asks
        entries = [e for e in self.rules() if e.parsed.family == "Read" and e.effect not in skip]
        if not entries:
            return None
        from .read_rules import ReadRules

        return ReadRules([e for e in entries if e.effect == "deny"],
                         [e for e in entries if e.effect == "ask"], roots)

    def _ask_shell(self, command: str) -> tuple[RuleEntry | None, str]:
        """(the ask rule a shell line meets, why) -- judged as a deny rule would be."""
        asks = [e for e in self.rules() if e.effect == "ask" and e.parsed.covers("Bash", "deny")]
        if not asks:
            return None, ""
        from .shell_analysis import analyze
        from .shell_verdict import judge

        verdict = judge(analyze(command), [], asks)
        if verdict.effect == "deny":
            return verdict.entry, f"{verdict.reason} (ask rule {verdict.entry.rule})"
        # what it runs is not proved free of an ask rule's match: ask, as a deny would
        return (asks[0], verdict.unseen) if verdict.unseen else (None, "")

    def ask_reason(self, command: str) -> str:
        """Why an ask rule makes the shell line `command` ask ("" if none does)."""
        return self._ask_shell(command)[1]

    def judge_shell(self, command: str) -> ShellVerdict:
        """Allow, deny or ask for a shell command line under the Bash rules (shell_verdict)."""
        entries = [e for e in self.rules() if e.parsed.covers("Bash", e.effect)]
        allows = [e for e in entries if e.effect == "allow"]
        denies = [e for e in entries if e.effect == "deny"]
        from .shell_analysis import analyze
        from .shell_verdict import judge

        return judge(analyze(command), allows, denies)

    def _save(self, rule: str, effect: str) -> None:
        if self.settings_path == self.layers.local.path:
            self.layers.save_rule(rule, effect)
        else:
            update_rule(self.settings_path, rule, effect, present=True)

    def _layer_of(self, source: str) -> str:
        if source.startswith("--"):
            return "flag"
        for layer in self.layers.layers:
            if source == layer.source:
                return layer.name
        return "local" if source == self.settings_source else source
