"""What the turn loop does with a response cut by max_tokens.

The cut tool call (its input incomplete) never runs and is not in the conversation. The turn
continues once: with a note saying the call did not run and a larger max_tokens for the next
request (doubled, up to the ceiling), or, for cut text, "continue exactly where you stopped".
A second cut in the same turn stops it (stop reason max_tokens). When complete calls of the
same response ran, the loop goes on anyway (their results are the next user message).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

CONTINUE_TEXT = "[cut by max_tokens: continue exactly where you stopped]"


@dataclass(frozen=True)
class CutPlan:
    again: bool  # continue the turn
    message: str  # the AgentError line the user sees
    note: str | None  # user text for the model, or None
    max_tokens: int | None  # the next request's max_tokens, None for the default


def plan(truncated_tool: str | None, ran_tools: bool, continued: bool, settings: Any) -> CutPlan:
    """The plan for one cut response; `continued`: this turn already continued once."""
    cut = f" inside a call to {truncated_tool}" if truncated_tool else ""
    again = ran_tools or not continued
    how = "continuing" if again else "stopping: it was already continued once this turn"
    message = f"response cut by max_tokens{cut}; {how}"
    bigger = None
    if truncated_tool and again:
        ceiling = max(settings.max_tokens, settings.max_tokens_ceiling)
        bigger = min(ceiling, settings.max_tokens * 2)
    if truncated_tool:
        note = f"[your last response was cut by max_tokens{cut}; that call did not run"
        if bigger:
            note += f". You have max_tokens {bigger} now: send the whole call again"
        return CutPlan(again, message, note + "]", bigger)
    if again and not ran_tools:
        return CutPlan(True, message, CONTINUE_TEXT, None)
    return CutPlan(again, message, None, None)
