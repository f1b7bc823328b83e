"""Running the tool calls of one assistant response: lookup, validation, gate, handler, events.

Whatever goes wrong (an unknown tool, invalid input, a denial, a handler exception) becomes an
is_error tool_result for the model; nothing here raises. Every tool_use gets exactly one
result, in order, so the caller can put them all into one user message.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import ToolError
from ..events import Event, Notice, ToolFinished, ToolStarted
from ..fsutil import parse_json
from ..models.base import INVALID_INPUT_KEY, ToolResultBlock, ToolUseBlock
from ..tools.base import ToolContext, ToolOutput, ToolSet
from .conversation import INTERRUPTED, answers_for
from .tool_hooks import post_tool_use, pre_tool_use, updated_use

if TYPE_CHECKING:
    from ..permissions.gate import PermissionGate

SUMMARY_KEYS = ("command", "path", "file_path", "pattern", "task_id", "name", "to", "request_id")


@dataclass
class ToolRunner:
    """Runs calls for one agent. `make_context` builds the ToolContext of one call."""

    agent: str
    tools: ToolSet
    gate: PermissionGate | None
    emit: Callable[[Event], None]
    make_context: Callable[[], ToolContext]
    hooks: Any = None  # permissions.hooks.HookRunner: PreToolUse / PostToolUse

    def run_all(
        self, uses: list[ToolUseBlock], cancel: threading.Event
    ) -> tuple[list[ToolResultBlock], bool]:
        """One result per call, in order, and whether a tool asked to end the turn.

        Once `cancel` is set, the calls not yet started are answered "interrupted by the user".
        """
        results: list[ToolResultBlock] = []
        end_turn = False
        for use in uses:
            if cancel.is_set():
                results += answers_for([use], INTERRUPTED)
                continue
            out = self.run_one(use)
            results.append(ToolResultBlock(tool_use_id=use.id, content=out.result_content(),
                                           is_error=out.is_error))
            end_turn = end_turn or out.end_turn
        return results, end_turn

    def run_one(self, use: ToolUseBlock) -> ToolOutput:
        summary = summarize_args(use.input)
        self.emit(ToolStarted(self.agent, use.name, summary, use.id, input=use.input))
        out = self._execute(use)
        ok = not out.is_error
        self.emit(ToolFinished(self.agent, use.name, summary, ok, outcome(out), use.id,
                               content=out.content))
        return out

    def _execute(self, use: ToolUseBlock) -> ToolOutput:
        tool = self.tools.get(use.name)
        if tool is None:
            known = ", ".join(self.tools.names()) or "none"
            return ToolOutput(f"unknown tool {use.name!r}; available: {known}", is_error=True)
        if INVALID_INPUT_KEY in use.input:
            return ToolOutput(invalid_input(use.name, str(use.input[INVALID_INPUT_KEY])),
                              is_error=True)
        try:
            args = tool.parse(use.input)
        except ToolError as exc:
            return ToolOutput(str(exc), is_error=True)
        ctx = self.make_context()
        root = ctx.workspace.root if ctx.workspace is not None else ctx.workdir
        hook, refusal = pre_tool_use(self.hooks, self.agent, use, ctx.cancel, root)
        if refusal is not None:
            return refusal
        changed = updated_use(hook, use, root)
        if changed is not use:  # the hook rewrote the call: check it again, gate it as it is
            use = changed
            self.emit(Notice(self.agent, f"a PreToolUse hook changed the {use.name} call: "
                             f"{summarize_args(use.input) or 'its input'}"))
            try:
                args = tool.parse(use.input)
            except ToolError as exc:
                return ToolOutput(f"a PreToolUse hook's updatedInput is invalid: {exc}",
                                  is_error=True)
        if self.gate is not None:
            extra = {"hook": hook.permission} if hook is not None and hook.permission else {}
            try:
                decision = self.gate.check(tool, args, ctx, **extra)
            except Exception as exc:  # a failing check denies; it never kills the agent
                return ToolOutput(f"permission check failed: {exc}", is_error=True)
            if not decision.allowed:
                return ToolOutput(decision.message or f"{tool.name} was denied", is_error=True)
        out = tool.run(args, ctx)
        return post_tool_use(self.hooks, self.agent, use, out, ctx.cancel, hook, root)


def invalid_input(tool: str, raw: str) -> str:
    """Why input that is not a JSON object was refused: not JSON at all, or JSON of the
    wrong kind (a string holding the object is the usual slip)."""
    shown = raw if len(raw) <= 200 else raw[:200] + "..."
    try:
        value = parse_json(raw)
    except ValueError as exc:  # too deep for the parser is a ValueError too (parse_json)
        why = "nested too deeply" if "deep" in str(exc) else "not valid JSON"
        return f"tool input for {tool} was {why}: {shown}"
    kind = {str: "a string", list: "an array", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number"
    )
    hint = ""
    if isinstance(value, str) and value.lstrip().startswith("{"):
        hint = "; pass the object itself, not a JSON string holding it"
    return f"tool input for {tool} must be a JSON object, got {kind}: {shown}{hint}"


def summarize_args(args: dict[str, Any]) -> str:
    """The short argument shown next to a tool call: the command, the path, the task id."""
    keys = [k for k in SUMMARY_KEYS if args.get(k) is not None]
    keys += [k for k, v in args.items() if isinstance(v, str | int | float) and v != ""]
    if not keys:
        return ""
    value = args[keys[0]]
    text = f"#{value}" if keys[0] == "task_id" else str(value)
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= 80 else line[:77] + "..."


def outcome(out: ToolOutput) -> str:
    """One line about a result: its first line, and how many more lines there were."""
    lines = out.content.strip().splitlines()
    if not lines:
        return "error" if out.is_error else "no output"
    first = lines[0]
    if len(first) > 100 and not out.is_error:
        first = first[:97] + "..."
    elif len(first) > 300:  # an error's reason is often at its end ("No space left on device")
        first = first[:150] + "..." + first[-147:]
    return first + (f" (+{len(lines) - 1} lines)" if len(lines) > 1 else "")
