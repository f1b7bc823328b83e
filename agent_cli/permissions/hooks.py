"""Hooks in Claude Code's format, from every settings layer:
`"hooks": {"<Event>": [{"matcher": "...", "hooks": [{"type": "command", "command": "...",
"timeout": 60}]}]}`.

Events: PreToolUse, PostToolUse, PermissionRequest, UserPromptSubmit, Stop, SessionStart,
SessionEnd, TaskCreated, TaskCompleted, TeammateIdle, Notification, PreCompact,
SubagentStart, SubagentStop (permissions/hook_events.py says where the last five fire). The
matcher (tool events: the tool name, ours or its Claude Code alias; SessionStart: the source;
PreCompact: manual / auto; Notification: its type; Subagent*: the teammate's role) is all
when empty or `*`, a list of exact names when it is only names and `|`, else a regular
expression searched in the name. Hooks of `"type": "prompt"` are not run: one warning names
how many were skipped.

A hook gets the event as JSON on stdin; exit 0 with a JSON object on stdout may decide
(`decision`, `reason`, `continue`, `stopReason`, `systemMessage`,
`hookSpecificOutput.permissionDecision` / `additionalContext`); exit 2 blocks with stderr as
the reason; any other exit code is a warning and changes nothing. The matched hooks of one
event run one after another (never under a lock); their answers are folded into one
HookOutcome: deny beats ask beats allow, any block blocks. What each event does with the
outcome is up to its caller (agent/tool_calls.py, team/board_tools.py, team/verify.py,
team/idle.py, ui/hooked_turn.py).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..events import Notice
from .hook_process import HookReply, run_hook_command
from .hook_tools import CLAUDE_NAMES
from .layers import SettingsLayers
from .settings import SettingsError

EVENTS = ("PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SessionStart",
          "SessionEnd", "TaskCreated", "TaskCompleted", "TeammateIdle", "Notification",
          "PreCompact", "SubagentStart", "SubagentStop", "PermissionRequest")
TOOL_EVENTS = ("PreToolUse", "PostToolUse", "PermissionRequest")
DEFAULT_TIMEOUT_S = 60.0
ALIASES = CLAUDE_NAMES  # our tool names and the Claude Code names a matcher may use
NAMES_RE = re.compile(r"^[A-Za-z0-9_|-]+$")
PERMISSION_ORDER = {"deny": 3, "ask": 2, "allow": 1}
REASON_LIMIT = 4000  # characters of a hook's reason passed on (to the model, the user)


@dataclass(frozen=True)
class HookSpec:
    """One configured command: its event, matcher, command, timeout and settings layer."""

    event: str
    matcher: str
    command: str
    timeout_s: float
    layer: str
    pattern: re.Pattern[str] | None = None  # a regex matcher, compiled

    def matches(self, target: str | None) -> bool:
        m = self.matcher.strip()
        if m in ("", "*") or target is None:
            return True
        names = {target, ALIASES.get(target, target)}
        if NAMES_RE.match(m):
            return bool(names & set(m.split("|")))
        return self.pattern is not None and any(self.pattern.search(n) for n in names)


@dataclass
class HookOutcome:
    """What the matched hooks of one event said, folded together."""

    ran: int = 0
    blocked: bool = False  # exit 2, or decision "block" (PreToolUse: also "deny")
    reason: str = ""  # stderr of exit 2, or `reason`
    permission: str | None = None  # PreToolUse: allow | ask | deny
    permission_reason: str = ""
    context: list[str] = field(default_factory=list)  # additionalContext (+ plain stdout)
    stop: bool = False  # continue: false
    stop_reason: str = ""
    by: str = ""  # the command that blocked or decided
    updated_input: dict[str, Any] | None = None  # PreToolUse: updatedInput, Claude Code's names
    behavior: str | None = None  # PermissionRequest: decision.behavior, allow | deny

    @property
    def denied(self) -> bool:
        return self.blocked or self.permission == "deny"

    def why(self, limit: int = REASON_LIMIT) -> str:
        """The reason to show (the model sees it): stderr of exit 2, or the JSON's reason."""
        text = (self.reason or self.permission_reason or self.stop_reason).strip()
        return text if len(text) <= limit else text[:limit] + f"... [{len(text)} chars]"


def _group_specs(event: str, groups: Any, layer: str, path: Path,
                 warnings: list[str]) -> list[HookSpec]:
    if not isinstance(groups, list):
        raise SettingsError(f"{path}: hooks.{event} must be a list of matcher groups")
    specs: list[HookSpec] = []
    for group in groups:
        if not isinstance(group, dict) or not isinstance(group.get("hooks", []), list):
            raise SettingsError(f"{path}: hooks.{event}: each group is "
                                '{"matcher": "...", "hooks": [...]}')
        matcher = group.get("matcher", "") or ""
        if not isinstance(matcher, str):
            raise SettingsError(f"{path}: hooks.{event}: matcher must be a string")
        pattern = None
        if matcher.strip() not in ("", "*") and not NAMES_RE.match(matcher.strip()):
            try:
                pattern = re.compile(matcher.strip())
            except re.error as exc:
                warnings.append(f"{path}: hooks.{event}: matcher {matcher!r} is not a valid "
                                f"regular expression ({exc}); its hooks never run")
                continue
        for hook in group.get("hooks", []):
            spec = _hook_spec(event, matcher, hook, layer, path, warnings, pattern)
            if spec is not None:
                specs.append(spec)
    return specs


def _hook_spec(event: str, matcher: str, hook: Any, layer: str, path: Path,
               warnings: list[str], pattern: re.Pattern[str] | None) -> HookSpec | None:
    if not isinstance(hook, dict):
        raise SettingsError(f"{path}: hooks.{event}: each hook is an object")
    kind = hook.get("type", "command")
    if kind != "command":
        if kind != "prompt":  # prompt hooks are counted into one line (load_hooks)
            warnings.append(f"{path}: hooks.{event}: type {kind!r} is not supported "
                            "(only \"command\"); skipped")
        return None
    command = hook.get("command")
    if not isinstance(command, str) or not command.strip():
        raise SettingsError(f"{path}: hooks.{event}: a command hook needs a \"command\" string")
    timeout = hook.get("timeout", DEFAULT_TIMEOUT_S)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
        raise SettingsError(f"{path}: hooks.{event}: timeout must be a number of seconds > 0")
    return HookSpec(event, matcher, command, float(timeout), layer, pattern)


@dataclass(frozen=True)
class HeldHooks:
    """The repository's hooks, held back until the human trusts them (project_trust.py)."""

    specs: list[HookSpec]
    raw: Any  # the `hooks` values as read
    path: Path


def _layer_specs(layer: Any, hooks: Any, warnings: list[str]) -> list[HookSpec]:
    if not isinstance(hooks, dict):
        raise SettingsError(f"{layer.path}: 'hooks' must be an object of events")
    found: list[HookSpec] = []
    for event, groups in hooks.items():
        if event not in EVENTS:
            warnings.append(f"{layer.path}: hook event {event!r} is not supported by "
                            f"agent-cli ({', '.join(EVENTS)}); ignored")
            continue
        found += _group_specs(event, groups, layer.name, layer.path, warnings)
    return found


def _prompt_hooks(hooks: Any) -> int:
    """How many hooks of `"type": "prompt"` a layer's (well-formed) `hooks` value names."""
    if not isinstance(hooks, dict):
        return 0
    return sum(1 for groups in hooks.values() if isinstance(groups, list)
               for g in groups if isinstance(g, dict) and isinstance(g.get("hooks"), list)
               for h in g["hooks"] if isinstance(h, dict) and h.get("type") == "prompt")


def load_hooks(layers: SettingsLayers
               ) -> tuple[list[HookSpec], list[str], HeldHooks | None]:
    """Every layer's effective hooks (lowest layer first), warnings, and the repository's
    hooks when they are not trusted yet (SettingsLayers.held; then left out of the first
    list); SettingsError for bad shapes."""
    specs: list[HookSpec] = []
    warnings: list[str] = []
    prompts = 0
    for layer, data in layers.loaded():
        if data.get("hooks") is not None:
            specs += _layer_specs(layer, data["hooks"], warnings)
            prompts += _prompt_hooks(data["hooks"])
    if prompts:
        warnings.append(f"{prompts} hook{'s' if prompts != 1 else ''} of type \"prompt\" not "
                        "run: agent-cli runs command hooks only")
    held_settings = layers.held()
    if held_settings is None or not held_settings.hooks:
        return specs, warnings, None
    held: list[HookSpec] = []
    for name, hooks in held_settings.hooks:
        held += _layer_specs(layers.layer(name), hooks, warnings)
    if not held:
        return specs, warnings, None
    raw = [hooks for _, hooks in held_settings.hooks]
    return specs, warnings, HeldHooks(held, raw, held_settings.path)


def held_warning(held: HeldHooks) -> str:
    """The line a run that did not ask shows about the held hooks."""
    n = len(held.specs)
    return (f"{n} hook{'s' if n != 1 else ''} in {held.path.parent.name}/{held.path.name} "
            f"not run: not trusted (a terminal session asks at start; "
            f"--trust-project-settings runs them unasked)")


class HookRunner:
    """Runs the configured hooks of an event and folds their answers (one per session)."""

    def __init__(self, specs: list[HookSpec], workdir: Path, emit: Callable[[Any], None],
                 audit: Any, session_id: str, context: Callable[[str], dict[str, Any]]) -> None:
        self.specs = specs
        self.workdir = Path(workdir)
        self.emit = emit
        self.audit = audit
        self.session_id = session_id
        self.context = context  # agent -> extra payload fields (task, mode, team, ...)

    def add(self, specs: list[HookSpec]) -> None:
        """Run these too from now on (held project hooks the human just trusted)."""
        self.specs = [*self.specs, *specs]  # one assignment: a reader sees old or new

    def active(self, event: str, target: str | None = None) -> bool:
        return any(s.event == event and s.matches(target) for s in self.specs)

    def run(self, event: str, agent: str, fields: dict[str, Any], target: str | None = None,
            cancel: threading.Event | None = None) -> HookOutcome:
        """Run every hook of `event` matching `target`; never raises."""
        outcome = HookOutcome()
        matched = [s for s in self.specs if s.event == event and s.matches(target)]
        if not matched:
            return outcome
        payload = self.payload(event, agent, fields)
        env = {"CLAUDE_PROJECT_DIR": str(self.workdir), "AGENT_CLI_PROJECT_DIR": str(self.workdir)}
        for spec in matched:
            reply = run_hook_command(spec.command, payload, self.workdir, spec.timeout_s,
                                     cancel, env)
            outcome.ran += 1
            self._fold(spec, reply, outcome, agent)
        self._audit(event, agent, fields, outcome, target)
        return outcome

    def refusal(self, event: str, agent: str, fields: dict[str, Any],
                cancel: threading.Event | None = None) -> str | None:
        """For events a hook can veto (TaskCreated, TaskCompleted): why it was blocked, or
        None when it may go ahead (no hook, or none blocked)."""
        if not self.active(event):
            return None
        outcome = self.run(event, agent, fields, cancel=cancel)
        if outcome.blocked or outcome.stop:
            return outcome.why() or f"blocked by a {event} hook"
        return None

    def payload(self, event: str, agent: str, fields: dict[str, Any]) -> dict[str, Any]:
        transcript = self.workdir / ".team" / "transcripts" / f"{agent}.jsonl"
        base = {"session_id": self.session_id, "transcript_path": str(transcript),
                "cwd": str(self.workdir), "hook_event_name": event, "agent": agent}
        try:
            base.update(self.context(agent))
        except Exception as exc:  # the hook still runs, without the extras
            self._warn(agent, f"hook context unavailable: {exc}")
        base.update(fields)
        return base

    def _fold(self, spec: HookSpec, reply: HookReply, out: HookOutcome, agent: str) -> None:
        name = f"{spec.event} hook `{_short(spec.command)}`"
        if reply.warning:
            self._warn(agent, f"{name}: {reply.warning}")
        if reply.code == 2:
            out.blocked = True
            out.reason = out.reason or reply.stderr.strip() or f"blocked by {name}"
            out.by = out.by or spec.command
            return
        if reply.code != 0:
            return
        data = reply.data
        if data is None:
            if reply.stdout.strip() and spec.event in ("UserPromptSubmit", "SessionStart"):
                out.context.append(reply.stdout.strip())
            return
        self._fold_json(spec, data, out, agent)

    def _fold_json(self, spec: HookSpec, data: dict[str, Any], out: HookOutcome,
                   agent: str) -> None:
        message = data.get("systemMessage")
        if isinstance(message, str) and message.strip():
            self.emit(Notice(agent, f"hook: {message.strip()}"))
        if data.get("continue") is False:
            out.stop = True
            out.stop_reason = out.stop_reason or str(data.get("stopReason") or "")
        special = data.get("hookSpecificOutput")
        special = special if isinstance(special, dict) else {}
        context = special.get("additionalContext")
        if isinstance(context, str) and context.strip():
            out.context.append(context.strip())
        decision = data.get("decision")
        reason = str(data.get("reason") or "")
        if decision == "block":
            out.blocked = True
            out.reason = out.reason or reason or f"blocked by a {spec.event} hook"
            out.by = out.by or spec.command
        perm = special.get("permissionDecision")
        verdict = special.get("decision")
        if spec.event == "PermissionRequest" and isinstance(verdict, dict):
            behavior = verdict.get("behavior")
            if behavior in ("allow", "deny") and out.behavior != "deny":
                out.behavior = behavior
                out.permission_reason = str(verdict.get("message") or reason or "")
                out.by = spec.command
        if spec.event == "PreToolUse":
            updated = special.get("updatedInput")
            if isinstance(updated, dict):
                out.updated_input = {**(out.updated_input or {}), **updated}
            elif updated is not None:
                self._warn(agent, f"PreToolUse hook `{_short(spec.command)}`: updatedInput "
                           "is not an object; ignored")
            if perm is None and decision in ("approve", "block"):  # the older spelling
                perm = "allow" if decision == "approve" else "deny"
            if perm in PERMISSION_ORDER:
                if PERMISSION_ORDER[perm] > PERMISSION_ORDER.get(out.permission or "", 0):
                    out.permission = perm
                    out.permission_reason = str(special.get("permissionDecisionReason")
                                                or reason or "")
                    out.by = spec.command
            elif perm is not None:
                self._warn(agent, f"PreToolUse hook `{_short(spec.command)}`: "
                           f"permissionDecision {perm!r} is not allow, deny or ask; ignored")

    def _audit(self, event: str, agent: str, fields: dict[str, Any], out: HookOutcome,
               target: str | None) -> None:
        if not (out.blocked or out.permission or out.stop):
            return
        decision = "deny" if out.denied or out.stop else out.permission or "allow"
        tool = target if event in TOOL_EVENTS and target else fields.get("tool_name", event)
        try:
            self.audit.record(agent=agent, tool=tool,
                              input=fields.get("tool_input", fields), decision=decision,
                              source=f"hook {event}: {_short(out.by)}", feedback=out.why())
        except Exception as exc:  # an unwritable audit log is reported, never fatal
            self._warn(agent, f"audit log not written: {exc}")

    def _warn(self, agent: str, text: str) -> None:
        self.emit(Notice(agent, text, level="warning"))


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
