"""The lead's session hooks: SessionStart / SessionEnd, UserPromptSubmit before a typed prompt,
Stop after a turn that ended normally. One LeadHooks per session (REPL or headless).

- SessionStart (source startup, resume, or clear after /clear): its additionalContext (or
  plain stdout) opens the lead's next turn.
- SessionEnd: reason prompt_input_exit (the REPL ends), clear (/clear), other (a -p run).
- UserPromptSubmit: exit 2 or `decision: "block"` drops the prompt (the reason is shown to
  the user as a warning, nothing reaches the model); context is added below the prompt.
- Stop: exit 2 or `decision: "block"` makes the lead go on, with the reason as the next
  message (`stop_hook_active` is true then); at most MAX_STOP_BLOCKS times in a row.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from ..events import Notice
from ..names import LEAD

MAX_STOP_BLOCKS = 5


class LeadHooks:
    def __init__(self, runtime: Any) -> None:
        self.rt = runtime
        self._lock = threading.Lock()
        self._context: list[str] = []  # SessionStart context, for the first turn

    @property
    def hooks(self) -> Any:
        return getattr(self.rt, "hooks", None)

    def _warn(self, text: str) -> None:
        self.rt.events.emit(Notice(LEAD, text, level="warning"))

    def session_start(self, source: str | None = None) -> None:
        """SessionStart with `source` "startup", or "resume" for -c / --resume."""
        if source is None:
            resumed = getattr(self.rt.config, "session", None) not in (None, "new")
            source = "resume" if resumed else "startup"
        for warning in getattr(self.rt, "hook_warnings", []):
            self._warn(f"hooks: {warning}")
        sandbox = getattr(self.rt, "sandbox", None)
        if sandbox is not None and sandbox.enabled and not sandbox.availability.ok:
            self._warn(sandbox.banner() + "; " + sandbox.mode_line().split("; ", 1)[-1])
        for note in getattr(self.rt, "settings_notes", []):
            self._warn(f"settings: {note}")
        for warning in getattr(self.rt, "state_warnings", []):
            self._warn(f"state: {warning}")
        held = getattr(self.rt, "held_settings", None)
        if held is not None:  # a terminal session asked before this; still held: say so
            from ..permissions.project_trust import warning_line

            hooks = getattr(self.rt, "held_hooks", None)
            self._warn(warning_line(held, len(hooks.specs) if hooks is not None else 0))
        self._start_hooks(source)

    def cleared(self) -> None:
        """/clear: SessionEnd with reason "clear", then SessionStart with source "clear"
        (its context opens the next turn), as Claude Code does."""
        self.session_end("clear")
        self._start_hooks("clear")

    def _start_hooks(self, source: str) -> None:
        if self.hooks is None or not self.hooks.active("SessionStart", source):
            return
        outcome = self.hooks.run("SessionStart", LEAD, {"source": source,
                                                        "model": self.rt.model_spec()}, source)
        with self._lock:
            self._context += outcome.context

    def session_end(self, reason: str) -> None:
        if self.hooks is not None and self.hooks.active("SessionEnd"):
            self.hooks.run("SessionEnd", LEAD, {"reason": reason})

    def prompt(self, text: str) -> str | None:
        """The prompt to send (with hook context added), or None when a hook dropped it."""
        if self.hooks is None or not self.hooks.active("UserPromptSubmit"):
            return text
        outcome = self.hooks.run("UserPromptSubmit", LEAD, {"prompt": text})
        if outcome.blocked or outcome.stop:
            why = outcome.why() or "no reason given"
            self._warn(f"prompt not sent: a UserPromptSubmit hook blocked it: {why}")
            return None
        if outcome.context:
            body = "\n".join(outcome.context)
            return f"{text}\n\n<hook-context event=\"UserPromptSubmit\">\n{body}\n</hook-context>"
        return text

    def run_turn(self, agent: Any, content: str | list[str],
                 pre_call: Callable[[], Any] | None = None) -> Any:
        """agent.run_turn, opened by the SessionStart context once, and continued while a
        Stop hook blocks (bounded)."""
        parts = [content] if isinstance(content, str) else list(content)
        with self._lock:
            opening, self._context = self._context, []
        if opening:
            body = "\n".join(opening)
            parts.insert(0, f"<hook-context event=\"SessionStart\">\n{body}\n</hook-context>")
        result = agent.run_turn(parts if len(parts) > 1 else parts[0], pre_call=pre_call)
        for n in range(MAX_STOP_BLOCKS + 1):
            if result.stop_reason != "end_turn" or not self._stop_hooks():
                return result
            outcome = self.hooks.run("Stop", LEAD, {
                "stop_hook_active": n > 0, "last_assistant_message": result.text},
                cancel=getattr(agent, "cancel_event", None))
            if not outcome.blocked:
                return result
            if n == MAX_STOP_BLOCKS:
                self._warn(f"a Stop hook blocked {MAX_STOP_BLOCKS} times in a row; stopping")
                return result
            from ..framing import neutralize

            why = neutralize(outcome.why() or "keep going")
            result = agent.run_turn(f"<hook-feedback event=\"Stop\">{why}</hook-feedback>",
                                    pre_call=pre_call)
        return result

    def _stop_hooks(self) -> bool:
        return self.hooks is not None and self.hooks.active("Stop")
