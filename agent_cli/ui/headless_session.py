"""What a headless run adds around the lead's turns: the session hooks (SessionStart /
SessionEnd, UserPromptSubmit on the -p prompt, Stop), the --max-turns budget, and how both
show in the report (`stop_reason` "max_turns" / "prompt_blocked", `max_turns`) and the exit
code (1 when the budget ran out or the prompt was blocked)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ..team.lead_hooks import LeadHooks
from .turn_budget import TurnBudget


class HeadlessSession:
    def __init__(self, runtime: Any) -> None:
        self.rt = runtime
        self.hooks = LeadHooks(runtime)
        self.budget = TurnBudget(getattr(runtime.config, "max_turns", None))
        self.prompt_blocked = False
        self.started = time.monotonic()

    def start(self) -> None:
        self.hooks.session_start()

    def end(self) -> None:
        self.hooks.session_end("other")

    def prompt(self, text: str) -> str | None:
        sent = self.hooks.prompt(text)
        self.prompt_blocked = sent is None
        return sent

    def turn(self, lead: Any) -> Callable[[Any], Any]:
        """How one lead turn runs: with the hooks, drawing on the budget."""
        return lambda content: self.hooks.run_turn(lead, content, self.budget.pre_call)

    def spent(self) -> bool:
        return self.budget.exhausted

    def annotate(self, report: dict[str, Any]) -> None:
        if self.budget.limit is not None:
            report["max_turns"] = {"limit": self.budget.limit, "used": self.budget.used,
                                   "reached": self.budget.exhausted}
        if self.budget.exhausted:
            report["stop_reason"] = "max_turns"
        if self.prompt_blocked:
            report["stop_reason"] = "prompt_blocked"

    def failed(self) -> str | None:
        """The stderr line when this run failed for a reason of ours, else None."""
        if self.prompt_blocked:
            return "agent-cli: the prompt was blocked by a UserPromptSubmit hook"
        if self.budget.exhausted:
            return f"agent-cli: stopped after {self.budget.limit} lead model requests (--max-turns)"
        return None


def result_fields(report: dict[str, Any], session: HeadlessSession) -> dict[str, Any]:
    """What stream-json's closing line adds, as Claude Code names it: `subtype`, `is_error`,
    `num_turns` (lead model requests) and `duration_ms`."""
    if session.spent():
        subtype, is_error = "error_max_turns", True
    elif (report.get("error") or report.get("teammate_errors") or report.get("timed_out")
          or session.prompt_blocked):
        subtype, is_error = "error_during_execution", True
    else:
        subtype, is_error = "success", False
    return {"subtype": subtype, "is_error": is_error, "num_turns": session.budget.used,
            "duration_ms": int((time.monotonic() - session.started) * 1000)}
