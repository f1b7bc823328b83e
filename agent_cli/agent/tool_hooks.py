"""PreToolUse / PostToolUse hooks at the tool-call boundary (see permissions/hooks.py).

PreToolUse runs after the input is checked and before the gate: a block (exit 2, or a deny)
refuses the call with the hook's reason as the result the model sees; `continue: false` also
ends the turn; allow / ask go on to the gate, which never lets a hook's allow past a deny
rule, the plan gate or an ask rule. PostToolUse runs after the handler: a block's reason and
any additionalContext are added to the result the model sees.
"""

from __future__ import annotations

import threading
from typing import Any

from ..models.base import ToolUseBlock
from ..tools.base import ToolOutput


def pre_tool_use(hooks: Any, agent: str, use: ToolUseBlock,
                 cancel: threading.Event) -> tuple[Any, ToolOutput | None]:
    """(the hooks' outcome or None, a refusal to return instead of running the call)."""
    if hooks is None or not hooks.active("PreToolUse", use.name):
        return None, None
    outcome = hooks.run("PreToolUse", agent, {"tool_name": use.name, "tool_input": use.input,
                                             "tool_use_id": use.id}, use.name, cancel)
    if outcome.denied or outcome.stop:
        why = outcome.why() or "no reason given"
        text = f"Refused by a PreToolUse hook: {why}"
        return outcome, ToolOutput(text, is_error=True, end_turn=outcome.stop)
    return outcome, None


def post_tool_use(hooks: Any, agent: str, use: ToolUseBlock, out: ToolOutput,
                  cancel: threading.Event, pre: Any = None) -> ToolOutput:
    """The result, with what the PreToolUse (additionalContext) and PostToolUse hooks had to
    say to the model appended."""
    if pre is not None and pre.context:
        notes = [f"[PreToolUse hook context: {c}]" for c in pre.context]
        out = ToolOutput("\n".join([out.content.rstrip("\n"), *notes]), out.is_error,
                         out.end_turn, out.media)
    if hooks is None or not hooks.active("PostToolUse", use.name):
        return out
    response = {"content": out.content, "is_error": out.is_error}
    outcome = hooks.run("PostToolUse", agent, {"tool_name": use.name, "tool_input": use.input,
                                              "tool_use_id": use.id, "tool_response": response},
                        use.name, cancel)
    notes = []
    if outcome.blocked:
        notes.append(f"[PostToolUse hook: {outcome.why() or 'blocked'}]")
    notes += [f"[PostToolUse hook context: {c}]" for c in outcome.context]
    if not notes and not outcome.stop:
        return out
    content = "\n".join([out.content.rstrip("\n"), *notes]) if notes else out.content
    return ToolOutput(content, out.is_error, out.end_turn or outcome.stop, out.media)
