"""PreToolUse / PostToolUse hooks at the tool-call boundary (see permissions/hooks.py).

A hook sees the call as Claude Code shows it (permissions/hook_tools.py): `tool_name` Bash,
Write, Edit, ..., `tool_input` with `file_path` (absolute), `command`, ... PreToolUse runs
after the input is checked and before the gate: a block (exit 2, or a deny) refuses the call
with the hook's reason as the result the model sees; `continue: false` also ends the turn;
allow / ask go on to the gate, which never lets a hook's allow past a deny rule, the plan
gate or an ask rule. Its `updatedInput` (Claude Code's names) becomes the call's input
(`updated_use`): validated again, and the gate decides on the changed call. PostToolUse runs
after the handler: a block's reason and any additionalContext are added to the result the
model sees.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from ..models.base import ToolUseBlock
from ..permissions.hook_tools import claude_input, claude_name, claude_response, from_claude_input
from ..tools.base import ToolOutput


def _root(hooks: Any, root: Path | None) -> Path:
    return Path(root) if root is not None else Path(getattr(hooks, "workdir", "."))


def _fields(use: ToolUseBlock, root: Path) -> dict[str, Any]:
    return {"tool_name": claude_name(use.name),
            "tool_input": claude_input(use.name, use.input, root), "tool_use_id": use.id}


def pre_tool_use(hooks: Any, agent: str, use: ToolUseBlock, cancel: threading.Event,
                 root: Path | None = None) -> tuple[Any, ToolOutput | None]:
    """(the hooks' outcome or None, a refusal to return instead of running the call).
    `root`: the directory the caller's file tools work in (a worktree, or the workdir)."""
    if hooks is None or not hooks.active("PreToolUse", use.name):
        return None, None
    outcome = hooks.run("PreToolUse", agent, _fields(use, _root(hooks, root)), use.name, cancel)
    if outcome.denied or outcome.stop:
        why = outcome.why() or "no reason given"
        text = f"Refused by a PreToolUse hook: {why}"
        return outcome, ToolOutput(text, is_error=True, end_turn=outcome.stop)
    return outcome, None


def updated_use(outcome: Any, use: ToolUseBlock, root: Path) -> ToolUseBlock:
    """The call with a PreToolUse hook's updatedInput applied (mapped to our names), or the
    call as it was."""
    updated = getattr(outcome, "updated_input", None)
    if not updated:
        return use
    new = from_claude_input(use.name, updated, use.input, Path(root))
    return ToolUseBlock(id=use.id, name=use.name, input=new)


def post_tool_use(hooks: Any, agent: str, use: ToolUseBlock, out: ToolOutput,
                  cancel: threading.Event, pre: Any = None,
                  root: Path | None = None) -> ToolOutput:
    """The result, with what the PreToolUse (additionalContext) and PostToolUse hooks had to
    say to the model appended."""
    if pre is not None and pre.context:
        notes = [f"[PreToolUse hook context: {c}]" for c in pre.context]
        out = ToolOutput("\n".join([out.content.rstrip("\n"), *notes]), out.is_error,
                         out.end_turn, out.media)
    if hooks is None or not hooks.active("PostToolUse", use.name):
        return out
    fields = _fields(use, _root(hooks, root))
    fields["tool_response"] = claude_response(use.name, fields["tool_input"], out.content,
                                              out.is_error)
    outcome = hooks.run("PostToolUse", agent, fields, use.name, cancel)
    notes = []
    if outcome.blocked:
        notes.append(f"[PostToolUse hook: {outcome.why() or 'blocked'}]")
    notes += [f"[PostToolUse hook context: {c}]" for c in outcome.context]
    if not notes and not outcome.stop:
        return out
    content = "\n".join([out.content.rstrip("\n"), *notes]) if notes else out.content
    return ToolOutput(content, out.is_error, out.end_turn or outcome.stop, out.media)
