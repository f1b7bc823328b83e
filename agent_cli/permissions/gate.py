"""The permission gate: the one check every tool call passes before its handler runs.

Order: read-only tools are allowed (never ask, never audited). Otherwise: deny rules -> the
plan gate (a teammate whose plan is not approved yet; skipped for plan_exempt tools) ->
coordination tools without a permission kind are allowed (not audited) -> the mode (plan
refuses, bypassPermissions allows) -> ask rules (straight to the human) -> acceptEdits allows
file changes -> allow rules (settings layers, flags, session) -> the human through the
approval broker. Every other decision is appended to the audit log. A denial is a Decision
whose message becomes the tool result.

File writes into .agent-cli/, .tasks/, .team/ and .git/ skip acceptEdits and allow rules:
they always ask (bypassPermissions excepted), so a model cannot grant itself permissions or
forge board, inbox or approval state with write_file.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from ..errors import AgentCliError, ToolError
from ..tools.base import Tool, ToolContext
from ..tools.paths import relative_target
from .audit import AuditLog
from .broker import ApprovalAnswer, ApprovalBroker, ApprovalRequest
from .policy import PermissionPolicy
from .shell_analysis import analyze
from .shell_verdict import ShellVerdict

PROTECTED_DIRS = frozenset({".agent-cli", ".tasks", ".team", ".git"})
NOUNS = {"Bash": "shell command", "Write": "file write", "Edit": "file edit",
         "Mcp": "MCP tool call"}


@dataclass(frozen=True)
class Decision:
    allowed: bool
    source: str
    message: str = ""  # the tool result text when denied
    feedback: str = ""  # the human's words with a denial
    answer: str = ""  # allow_once / allow_always / deny when a human (or no one) was asked
    reason: str = ""  # why it asked although a rule named the command (shell_verdict)


class PermissionGate:
    def __init__(
        self,
        policy: PermissionPolicy,
        broker: ApprovalBroker,
        audit: AuditLog,
        plan_gate: Callable[[str], str | None] | None = None,
    ) -> None:
        self.policy = policy
        self.broker = broker
        self.audit = audit
        self.plan_gate = plan_gate

    def check(
        self, tool: Tool, args: BaseModel, ctx: ToolContext, hook: str | None = None
    ) -> Decision:
        """Decide whether `tool` may run with `args` for `ctx.agent` (may block on a human).

        `hook`: a PreToolUse hook's "allow" (counts like an allow rule: deny rules, the plan
        gate, plan mode and ask rules still win) or "ask" (asks even a read-only tool). A
        hook's deny is refused before the gate (agent/tool_hooks.py).
        """
        if tool.read_only and hook != "ask":
            return Decision(True, "read-only")
        try:
            target = self._target(tool, args, ctx)
        except ToolError as exc:
            return self._done(tool, args, ctx, Decision(False, "confinement", str(exc)))
        decision = self._decide(tool, args, ctx, target, hook)
        if decision.source == "coordination":
            return decision  # board/team tools: nothing to decide, nothing to audit
        return self._done(tool, args, ctx, decision)

    # ----- steps ----------------------------------------------------------------------------
    def _decide(
        self, tool: Tool, args: BaseModel, ctx: ToolContext, target: str, hook: str | None = None
    ) -> Decision:
        kind = tool.permission
        noun = NOUNS.get(kind or "", f"{tool.name} call")
        verdict = self.policy.judge_shell(target) if kind == "Bash" else None
        denied = self._denied(kind, target, noun, verdict) if kind is not None else None
        if denied is not None:
            return denied
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
        why = verdict.reason if verdict is not None and verdict.effect == "ask" else ""
        if mode == "bypassPermissions":
            unseen = verdict.unseen if verdict is not None else ""
            if unseen:  # deny rules win even here: what they might match does not run
                return Decision(
                    False, "mode bypassPermissions", f"Denied: the {noun} was not run: a deny "
                    f"rule might match what it runs, because {unseen}.", reason=unseen
                )
            return Decision(True, "mode bypassPermissions")
        if hook == "ask" or self.policy.find("ask", kind, target) is not None:
            asked = self.policy.ask_reason(target) if kind == "Bash" else ""
            return self._ask(tool, args, ctx, target, noun, asked, forced=True)  # beats allow
        guarded = kind in ("Write", "Edit") and is_protected(target)
        if mode == "acceptEdits" and kind in ("Write", "Edit") and not guarded:
            return Decision(True, "mode acceptEdits")
        if verdict is not None:
            allow = verdict.entry if verdict.effect == "allow" else None
        else:
            allow = None if guarded else self.policy.find("allow", kind, target)
        if allow is not None:
            return Decision(True, allow.rule)
        unseen = verdict.unseen if verdict is not None else ""
        if hook == "allow" and not guarded and not unseen:  # never past what a deny might hit
            return Decision(True, "hook")
        return self._ask(tool, args, ctx, target, noun, why)

    def _denied(
        self, kind: str, target: str, noun: str, verdict: ShellVerdict | None
    ) -> Decision | None:
        """The deny rules' step: a matching rule (for a shell command, the shell verdict's)."""
        deny = verdict.entry if verdict and verdict.effect == "deny" else None
        if verdict is None:
            deny = self.policy.find("deny", kind, target)
        if deny is None:
            return None
        why = f" ({verdict.reason})" if verdict and verdict.reason else ""
        return Decision(
            False,
            deny.rule,
            f"Denied by rule {deny.rule} ({deny.source}): {noun} "
            f"{_short(target)} was not run{why}.",
            reason=verdict.reason if verdict else "",
        )

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

    def _target(self, tool: Tool, args: BaseModel, ctx: ToolContext) -> str:
        raw = tool.rule_target(args) if tool.rule_target else ""
        if tool.permission in ("Write", "Edit"):
            return relative_target(ctx.workdir, raw)
        return raw

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
        )
        return d


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
        if analyze(target).simple and "*" not in target and "\n" not in target:
            return f"Bash({target.strip()})"
        return ""
    if permission == "Mcp":
        return target
    if permission in ("Write", "Edit"):
        if any(c in target for c in "*?") or target in ("", ".") or is_protected(target):
            return ""
        return f"{permission}({target})"
    return ""


def _denial_text(answer: ApprovalAnswer, noun: str, target: str, why: str = "") -> str:
    if answer.source == "headless":
        extra = answer.feedback.strip() or "Only calls allowed by a rule (--allow) can run."
        because = f" It needed a human because {why}." if why else ""
        return (
            f"Denied: no human was available to approve this {noun} ({_short(target)}); "
            f"this run is headless.{because} {extra}"
        )
    if answer.source == "interrupted":
        return f"Interrupted by the user: the {noun} was not run."
    if answer.source == "closed":
        return f"Denied: the session is closing; the {noun} was not run."
    text = f"The user denied this {noun}."
    if answer.feedback.strip():
        text += f" Feedback: {answer.feedback.strip()}"
    return text


def _where(ctx: ToolContext) -> str:
    """The purpose plus where it happens: "task #3 verify (in task #3's worktree)"."""
    label = ctx.workspace.label if ctx.workspace is not None else ""
    if not label:
        return ctx.purpose
    return f"{ctx.purpose} ({label})" if ctx.purpose else f"({label})"


def _short(text: str, limit: int = 200) -> str:
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else text[:limit] + "..."


def _input_of(args: BaseModel) -> Any:
    try:
        return args.model_dump(mode="json")
    except Exception:  # pragma: no cover - a model that cannot dump itself
        return json.loads(json.dumps(str(args)))
