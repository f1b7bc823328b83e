"""The permission gate: the one check every tool call passes before its handler runs.

Order: read-only tools are allowed (never ask, never audited), but for the Read rules: a
read of a path a Read deny rule matches is denied, one an ask rule matches asks (both
audited), and every call carries the Read rules (ctx.read_guard) so the file tools withhold
what they meet in a search. Otherwise: deny rules -> the
plan gate (a teammate whose plan is not approved yet; skipped for plan_exempt tools) ->
coordination tools without a permission kind are allowed (not audited) -> the mode (plan
refuses, bypassPermissions allows) -> ask rules (straight to the human) -> acceptEdits allows
file changes -> allow rules (settings layers, flags, session) -> the human through the
approval broker. Every other decision is appended to the audit log, a check that failed on
its input (a shell line too deep to analyze, a path that cannot be encoded) included: that
call is denied. A denial is a Decision whose message becomes the tool result.

With the sandbox enabled (sandbox/manager.py), a shell command's placement joins in: after
the plan-mode step, a command that may not run at all (failIfUnavailable, or leaving the
sandbox with allowUnsandboxedCommands false) is denied and one that asks to leave the
sandbox always asks (headless: denied); after the ask rules, a sandboxed command is allowed
("sandboxed") when autoAllowBashIfSandboxed is on. The audit line says `sandboxed`.

An MCP tool not marked read-only is refused to an agent working in a task's worktree (its
server runs in the main tree: what it writes would skip the worktree and the landing).

File writes into .agent-cli/, .tasks/, .team/ and .git/ skip acceptEdits and allow rules:
they always ask (bypassPermissions excepted), so a model cannot grant itself permissions or
forge board, inbox or approval state with write_file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import AgentCliError, Interrupted, ToolError
from ..sandbox.placement import refusal as sandbox_refusal
from ..shorten import shorten
from ..tools.read_guard import spellings
from ..tools.roots import place
from ..tools.workspace_root import Workspace
from .audit import AuditLog
from .broker import ApprovalAnswer, ApprovalBroker, ApprovalRequest
from .hook_events import notify, permission_request
from .hook_tools import claude_name
from .path_rules import PathTarget
from .policy import PermissionPolicy

if TYPE_CHECKING:  # the tools' models and the shell parser: loaded at the first tool call
    from pydantic import BaseModel

    from ..tools.base import Tool, ToolContext
    from .read_rules import ReadRules
    from .shell_verdict import ShellVerdict

if TYPE_CHECKING:
    from ..sandbox.manager import Sandbox

PROTECTED_DIRS = frozenset({".agent-cli", ".tasks", ".team", ".git"})
LEAVING = "it asks to run outside the sandbox (dangerouslyDisableSandbox)"
NOUNS = {"Bash": "shell command", "Write": "file write", "Edit": "file edit",
         "Read": "file read", "Mcp": "MCP tool call"}


@dataclass(frozen=True)
class Decision:
    allowed: bool
    source: str
    message: str = ""  # the tool result text when denied
    feedback: str = ""  # the human's words with a denial
    answer: str = ""  # allow_once / allow_always / deny when a human (or no one) was asked
    reason: str = ""  # why it asked although a rule named the command (shell_verdict)
    placement: str = ""  # a shell command with the sandbox enabled: where it runs


class PermissionGate:
    def __init__(
        self,
        policy: PermissionPolicy,
        broker: ApprovalBroker,
        audit: AuditLog,
        plan_gate: Callable[[str], str | None] | None = None,
        sandbox: Sandbox | None = None,
    ) -> None:
        self.policy = policy
        self.broker = broker
        self.audit = audit
        self.plan_gate = plan_gate
        self.sandbox = sandbox
        self.hooks: Any = None  # the session's HookRunner: PermissionRequest, Notification

    def check(
        self, tool: Tool, args: BaseModel, ctx: ToolContext, hook: str | None = None
    ) -> Decision:
        """Decide whether `tool` may run with `args` for `ctx.agent` (may block on a human).

        `hook`: a PreToolUse hook's "allow" (counts like an allow rule: deny rules, the plan
        gate, plan mode and ask rules still win) or "ask" (asks even a read-only tool). A
        hook's deny is refused before the gate (agent/tool_hooks.py).
        """
        extra = tuple(d.path for d in self.policy.extra_dirs())
        if ctx.workspace is not None and ctx.workspace.extra != extra:
            ctx.workspace = replace(ctx.workspace, extra=extra)  # --add-dir & co.
        roots = (ctx.workspace.root if ctx.workspace else ctx.workdir, self.policy.workdir)
        ctx.read_guard = self.policy.read_rules(roots)
        search = self.policy.search_rule(tool.name) if tool.permission == "Read" else None
        if search is not None and search.effect == "deny":
            return self._done(tool, args, ctx, Decision(
                False, search.rule, f"Denied by rule {search.rule} ({search.source}): "
                f"{tool.name} was not run."))
        if search is not None:
            hook = "ask"
        if tool.permission == "Read":
            return self._check_read(tool, args, ctx, ctx.read_guard, hook)
        if tool.read_only and hook != "ask":
            return Decision(True, "read-only")
        try:
            target = self._target(tool, args, ctx)
        except ToolError as exc:
            return self._done(tool, args, ctx, Decision(False, "confinement", str(exc)))
        except Exception as exc:  # noqa: BLE001 - an input the check cannot read is denied
            return self._done(tool, args, ctx, _unreadable(tool, exc))
        try:
            place = self._placement(tool, args, target)
            decision = self._decide(tool, args, ctx, target, hook, place)
        except Interrupted:
            raise
        except Exception as exc:  # noqa: BLE001 - e.g. a shell line too deep to analyze
            place, decision = "", _unreadable(tool, exc)
        if decision.source == "coordination":
            return decision  # board/team tools: nothing to decide, nothing to audit
        if place:
            decision = replace(decision, placement=place)
            if decision.allowed and place == "sandboxed" and self.sandbox is not None:
                self.sandbox.count(ctx.agent)
        return self._done(tool, args, ctx, decision)

    def _placement(self, tool: Tool, args: BaseModel, target: str) -> str:
        """Where a shell command runs when the sandbox is enabled ("" otherwise)."""
        if tool.permission != "Bash" or self.sandbox is None or not self.sandbox.enabled:
            return ""
        return self.sandbox.placement(target, bool(getattr(args, "dangerouslyDisableSandbox",
                                                           False)))

    # ----- steps ----------------------------------------------------------------------------
    def _check_read(
        self, tool: Tool, args: BaseModel, ctx: ToolContext, rules: ReadRules | None,
        hook: str | None,
    ) -> Decision:
        """read_file / grep / glob: the Read rules on the path the call names, by every
        spelling it may reach (as written, and resolved through symlinks)."""
        if rules is None and hook != "ask":
            return Decision(True, "read-only")
        raw = tool.rule_target(args) if tool.rule_target else "."
        try:
            where = place(ctx.workspace or Workspace.main(ctx.workdir), raw)
            names = spellings(where.root, where.raw)
            rules = where.guard(rules)  # an additional directory: the rules below it
        except (ToolError, ValueError, OSError):
            names = []  # a path the tool itself refuses (its error says why)
        for rel, is_dir in names if rules is not None else ():
            entry = rules.denying(rel, is_dir)
            if entry is not None:
                return self._done(tool, args, ctx, Decision(
                    False, entry.rule, f"Denied by rule {entry.rule} ({entry.source}): "
                    f"{tool.name} of {_short(raw)} was not run."))
        asking = [e for e in (rules.asking(rel, d) for rel, d in names) if e] if rules else []
        if hook != "ask" and not asking:
            return Decision(True, "read-only")
        if self.policy.mode == "bypassPermissions":
            return self._done(tool, args, ctx, Decision(True, "mode bypassPermissions"))
        why = f"rule {asking[0].rule} ({asking[0].source}) asks about it" if asking else ""
        decision = self._ask(tool, args, ctx, raw, NOUNS["Read"], why, forced=True)
        if decision.allowed and rules is not None:
            rules.approve([rel for rel, _ in names])
        return self._done(tool, args, ctx, decision)

    def _decide(
        self, tool: Tool, args: BaseModel, ctx: ToolContext, target: str, hook: str | None = None,
        place: str = "",
    ) -> Decision:
        kind = tool.permission
        noun = NOUNS.get(kind or "", f"{tool.name} call")
        verdict = self.policy.judge_shell(target) if kind == "Bash" else None
        key: str | PathTarget = target
        rel, guard = target, ctx.read_guard
        if kind in ("Write", "Edit"):
            key, rel, guard = self._file_key(ctx, target)
        denied = self._denied(kind, key, noun, verdict) if kind is not None else None
        if denied is None and kind == "Edit" and guard is not None:
            denied = self._unreadable(guard, rel, noun)
        if denied is not None:
            return denied
        if kind == "Mcp" and not tool.read_hint and ctx.workspace is not None \
                and ctx.workspace.task_id is not None:
            return Decision(False, "worktree", _mcp_from_worktree(tool.name, ctx.workspace.label))
        if tool.read_hint and hook != "ask":  # an MCP tool that says it only reads
            return Decision(True, "read-only hint")  # deny rules alone apply
        if self.plan_gate is not None and not tool.plan_exempt and not tool.read_only:
            refusal = self.plan_gate(ctx.agent)
            if refusal:
                return Decision(False, "plan", refusal)
        if kind is None:
            if hook == "ask":
                return self._ask(tool, args, ctx, target, noun, forced=True)
            return Decision(True, "coordination")
        mode = self.policy.mode
        if mode == "plan":
            return Decision(
                False,
                "mode plan",
                f"Plan mode is on: the {noun} was not run. Read and plan only; the user will "
                "switch modes when the plan is approved.",
            )
        refused = sandbox_refusal(place, self.sandbox)
        if refused:
            return Decision(False, "sandbox", f"Denied: {refused}.")
        if place == "outside":  # the model asks to leave the boundary: only a human says yes
            return self._ask(tool, args, ctx, target, noun, LEAVING, forced=True)
        why = verdict.reason if verdict is not None and verdict.effect == "ask" else ""
        if mode == "bypassPermissions":
            unseen = verdict.unseen if verdict is not None else ""
            if unseen:  # deny rules win even here: what they might match does not run
                return Decision(
                    False, "mode bypassPermissions", f"Denied: the {noun} was not run: a deny "
                    f"rule might match what it runs, because {unseen}.", reason=unseen
                )
            return Decision(True, "mode bypassPermissions")
        if hook == "ask" or self.policy.find("ask", kind, key) is not None:
            asked = self.policy.ask_reason(target) if kind == "Bash" else ""
            return self._ask(tool, args, ctx, target, noun, asked, forced=True)  # beats allow
        if place == "sandboxed" and self.sandbox is not None and self.sandbox.settings.auto_allow:
            return Decision(True, "sandboxed")  # the OS confines it: nothing to ask
        guarded = kind in ("Write", "Edit") and is_protected(rel)
        if mode == "acceptEdits" and kind in ("Write", "Edit") and not guarded:
            return Decision(True, "mode acceptEdits")
        if verdict is not None:
            allow = verdict.entry if verdict.effect == "allow" else None
        else:
            allow = None if guarded else self.policy.find("allow", kind, key)
        if allow is not None:
            return Decision(True, allow.rule)
        unseen = verdict.unseen if verdict is not None else ""
        if hook == "allow" and not guarded and not unseen:  # never past what a deny might hit
            return Decision(True, "hook")
        return self._ask(tool, args, ctx, target, noun, why)

    def _denied(
        self, kind: str, key: str | PathTarget, noun: str, verdict: ShellVerdict | None
    ) -> Decision | None:
        """The deny rules' step: a matching rule (for a shell command, the shell verdict's)."""
        deny = verdict.entry if verdict and verdict.effect == "deny" else None
        if verdict is None:
            deny = self.policy.find("deny", kind, key)
        if deny is None:
            return None
        target = key.rel if isinstance(key, PathTarget) else key
        why = f" ({verdict.reason})" if verdict and verdict.reason else ""
        return Decision(
            False,
            deny.rule,
            f"Denied by rule {deny.rule} ({deny.source}): {noun} "
            f"{_short(target)} was not run{why}.",
            reason=verdict.reason if verdict else "",
        )

    @staticmethod
    def _unreadable(rules: ReadRules, target: str, noun: str) -> Decision | None:
        """edit_file reads the file it edits: a Read deny rule on it denies the edit (its
        answers would tell the model what the file holds)."""
        entry = rules.denying(target)
        if entry is None:
            return None
        return Decision(False, entry.rule, f"Denied by rule {entry.rule} ({entry.source}): "
                        f"{noun} {_short(target)} was not run (editing reads the file).")

    def _ask(
        self, tool: Tool, args: BaseModel, ctx: ToolContext, target: str, noun: str, why: str = "",
        forced: bool = False,
    ) -> Decision:
        """Ask the human. `forced` (an ask rule or hook): no allow rule would stop the next
        ask, so none is offered."""
        req = ApprovalRequest(
            agent=ctx.agent,
            tool=tool.name,
            input=args.model_dump(mode="json"),
            summary=target,
            preview=self._preview(tool, args, ctx, target),
            purpose=_where(ctx),
            suggested_rule="" if forced else suggest_rule(tool.permission or "", target),
            reason=f"asks because {why}" if why else "",
        )
        answer = self._hooked_answer(req, ctx, forced)
        if answer is None:
            if self.broker.ui_attached:
                notify(self.hooks, ctx.agent, "permission_prompt",
                       f"{ctx.agent} needs your permission to use {claude_name(tool.name)}")
            answer = self.broker.ask(req, ctx.cancel)
        if answer.allowed:
            if answer.decision == "allow_always" and req.suggested_rule:
                try:
                    self.policy.add_rule(req.suggested_rule, "allow", save=answer.save)
                except AgentCliError:
                    self.policy.add_rule(req.suggested_rule, "allow")  # settings unwritable
            return Decision(True, answer.source, answer=answer.decision, reason=why)
        return Decision(
            False,
            answer.source,
            _denial_text(answer, noun, target, why),
            feedback=answer.feedback,
            answer=answer.decision,
            reason=why,
        )

    def _hooked_answer(self, req: ApprovalRequest, ctx: ToolContext,
                       forced: bool) -> ApprovalAnswer | None:
        """A PermissionRequest hook's answer in the human's place, or None to ask the human.
        A question an ask rule or a hook's ask forced is never answered "allow" by a hook."""
        root = ctx.workspace.root if ctx.workspace is not None else ctx.workdir
        verdict, why = permission_request(self.hooks, ctx.agent, req.tool, req.input, root,
                                          ctx.cancel)
        if verdict == "deny":
            return ApprovalAnswer("deny", feedback=why, source="hook PermissionRequest")
        if verdict == "allow" and not forced:
            return ApprovalAnswer("allow_once", source="hook PermissionRequest")
        return None

    def _target(self, tool: Tool, args: BaseModel, ctx: ToolContext) -> str:
        """What rules and approvals name: the command, or a file's workdir-relative path
        (its absolute real path in an additional directory)."""
        raw = tool.rule_target(args) if tool.rule_target else ""
        if tool.permission in ("Write", "Edit"):
            from ..tools.paths import relative_target, resolve_path

            where = place(ctx.workspace or Workspace.main(ctx.workdir), raw)
            if where.extra:
                return str(resolve_path(where.root, where.raw))
            return relative_target(ctx.workdir, where.raw)
        return raw

    def _file_key(self, ctx: ToolContext, target: str
                  ) -> tuple[PathTarget, str, ReadRules | None]:
        """(what Write/Edit rules match, the root-relative path, the Read rules there) of a
        file target: below the workdir, or below the additional directory holding it."""
        if target.startswith("/"):  # only an additional directory's file is absolute
            for extra in ctx.workspace.extra if ctx.workspace else ():
                base = os.path.realpath(extra)
                if target == base or target.startswith(base.rstrip("/") + "/"):
                    rel = os.path.relpath(target, base)
                    guard = ctx.read_guard.under(Path(base)) if ctx.read_guard else None
                    return PathTarget.of(rel, (Path(base),)), rel, guard
        return (PathTarget.of(target, (ctx.workdir, self.policy.workdir)), target,
                ctx.read_guard)

    @staticmethod
    def _preview(tool: Tool, args: BaseModel, ctx: ToolContext, target: str) -> str:
        if tool.preview is None:
            return target
        try:
            return tool.preview(args, ctx)
        except Exception as exc:  # the human still decides; show why there is no preview
            return f"(no preview: {exc})"

    def _done(self, tool: Tool, args: BaseModel, ctx: ToolContext, d: Decision) -> Decision:
        self.audit.record(
            agent=ctx.agent,
            tool=tool.name,
            input=_input_of(args),
            decision="allow" if d.allowed else "deny",
            source=d.source,
            feedback=d.feedback,
            **({"answer": d.answer} if d.answer else {}),
            **({"reason": d.reason} if d.reason else {}),
            **({"purpose": ctx.purpose} if ctx.purpose else {}),
            **({"sandboxed": d.placement == "sandboxed"} if d.placement else {}),
        )
        return d


def _unreadable(tool: Tool, exc: Exception) -> Decision:
    """The denial of a call whose check failed (it is audited like any other decision)."""
    why = ("it is nested too deeply to analyze" if isinstance(exc, RecursionError)
           else f"{type(exc).__name__}: {exc}")
    noun = NOUNS.get(tool.permission or "", f"{tool.name} call")
    return Decision(False, "unreadable", f"Denied: the {noun} was not run: the permission "
                    f"check could not read it ({why}).", reason=why)


def is_protected(target: str) -> bool:
    """Session state and settings: a file tool writing there always asks a human (unless
    bypassPermissions), so a model cannot grant itself rules or forge board/team state. A
    `.git` at any depth counts (`sub/.git/hooks/pre-commit` runs code as surely as the top
    one), in any letter case (case-insensitive filesystems)."""
    parts = target.split("/")
    return parts[0] in PROTECTED_DIRS or any(p.lower() == ".git" for p in parts)


def suggest_rule(permission: str, target: str) -> str:
    """The rule "allow always" adds: the exact command or path; "" when none would match."""
    if permission == "Bash":
        from .shell_analysis import analyze

        if analyze(target).simple and "*" not in target and "\n" not in target:
            return f"Bash({target.strip()})"
        return ""
    if permission == "Mcp":
        return target
    if permission in ("Write", "Edit"):
        if any(c in target for c in "*?[\\!#") or target in ("", ".") or is_protected(target):
            return ""
        if target.startswith("/"):  # a file in an additional directory: its absolute path
            return f"{permission}(/{target})"
        # A top-level name is anchored (`/x`): in gitignore terms `x` alone is any depth.
        return f"{permission}({target if '/' in target else '/' + target})"
    return ""


def _denial_text(answer: ApprovalAnswer, noun: str, target: str, why: str = "") -> str:
    if answer.source == "headless":
        extra = answer.feedback.strip() or "Only calls allowed by a rule (--allow) can run."
        because = f" It needed a human because {why}." if why else ""
        return (
            f"Denied: no human was available to approve this {noun} ({_short(target)}); "
            f"this run is headless.{because} {extra}"
        )
    if answer.source.startswith("hook"):
        why_not = answer.feedback.strip() or "no reason given"
        return f"Denied by a PermissionRequest hook: {why_not}; the {noun} was not run."
    if answer.source == "interrupted":
        return f"Interrupted by the user: the {noun} was not run."
    if answer.source == "closed":
        return f"Denied: the session is closing; the {noun} was not run."
    if answer.source == "refused":  # never shown to a human (pg/approvals.py): say why
        return f"Denied without asking: {answer.feedback.strip()} The {noun} was not run."
    text = f"The user denied this {noun}."
    if answer.feedback.strip():
        text += f" Feedback: {answer.feedback.strip()}"
    return text


def _mcp_from_worktree(name: str, label: str) -> str:
    """Why an MCP tool that may write is refused to an agent working in a task's worktree."""
    where = label.removeprefix("in ") or "a task's worktree"
    return (f"Refused: {name} is not marked read-only (readOnlyHint), and MCP servers run "
            f"in the user's main tree, not in {where}: its changes would skip the task's "
            "worktree and landing. From a worktree only read-only MCP tools can be called; "
            "change files with write_file / edit_file, or ask the lead (who works in the "
            "main tree) to make this call.")


def _where(ctx: ToolContext) -> str:
    """The purpose plus where it happens: "task #3 verify (in task #3's worktree)"."""
    label = ctx.workspace.label if ctx.workspace is not None else ""
    if not label:
        return ctx.purpose
    return f"{ctx.purpose} ({label})" if ctx.purpose else f"({label})"


def _short(text: str, limit: int = 200) -> str:
    return shorten(text.replace("\n", "\\n"), limit)


def _input_of(args: BaseModel) -> Any:
    try:
        return args.model_dump(mode="json")
    except Exception:  # pragma: no cover - a model that cannot dump itself
        return json.loads(json.dumps(str(args)))
