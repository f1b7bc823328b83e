"""LeadRunner: runs the lead's turns on a worker thread so the terminal stays responsive.

Messages typed while the lead works are queued and sent, in order, when it finishes. Each
turn starts with the lead's unread inbox (teammates' results) prepended. `wake()` queues a
turn on the inbox alone (the REPL calls it when a teammate's plan waits for the lead); it is
skipped when an earlier turn already took those messages in. `interrupt()` is safe from any
thread; `wait_idle()` blocks on a condition (tests, exit).

The lead Agent may be given as a factory: it is then built on first use, or by `warm()` on a
background thread once the prompt is on screen (building it costs tens of milliseconds that
the first prompt need not wait for).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from ..events import AgentError, Notice


class LeadRunner:
    def __init__(
        self,
        runtime: Any,
        agent: Any,
        on_change: Callable[[], None] = lambda: None,
        model_name: str = "",
        hooks: Any = None,
    ) -> None:
        """`agent`: the lead Agent, or a zero-argument callable that builds it. `hooks`: the
        session's LeadHooks (UserPromptSubmit, Stop, SessionStart context), if any."""
        self.runtime = runtime
        self.hooks = hooks
        self._factory: Callable[[], Any] | None = agent if callable(agent) else None
        self._agent: Any = None if callable(agent) else agent
        self._build_lock = threading.Lock()
        self._model_name = model_name
        self._warming = False
        self.on_change = on_change
        self._cond = threading.Condition()
        self._queue: list[Any] = []  # None: a turn on the inbox alone
        self._busy = False
        self.started_at: float | None = None
        self.last_result: Any = None
        self.turns = 0

    @property
    def agent(self) -> Any:
        """The lead Agent (built now if it was not yet)."""
        with self._build_lock:
            if self._agent is None and self._factory is not None:
                self._agent = self._factory()
            return self._agent

    def warm(self) -> None:
        """Build the lead Agent on a background thread (a failure shows as an error line and
        is raised again on first use)."""
        with self._cond:
            if self._agent is not None or self._warming:
                return
            self._warming = True

        def build() -> None:
            try:
                _ = self.agent
            except Exception as exc:
                self.runtime.events.emit(
                    AgentError("lead", f"cannot start the lead: {exc}", "internal")
                )

        threading.Thread(target=build, name="lead-build", daemon=True).start()

    @property
    def model_name(self) -> str:
        agent = self._agent
        return agent.model.name if agent is not None else self._model_name

    @property
    def tokens(self) -> int:
        """Tokens the lead used so far (0 before it is built)."""
        agent = self._agent
        return agent.usage.total if agent is not None else 0

    @property
    def context(self) -> Any:
        """How full the lead's context is (agent.context.ContextFigure; None before the
        first request)."""
        agent = self._agent
        return agent.context.figure() if agent is not None else None

    @property
    def busy(self) -> bool:
        with self._cond:
            return self._busy

    @property
    def queued(self) -> int:
        """How many of the user's messages wait behind the running turn."""
        with self._cond:
            return sum(1 for item in self._queue if item is not None)

    def submit(self, text: Any) -> bool:
        """Send `text` (or a custom command's CommandTurn) to the lead; False when it was
        queued behind a running turn."""
        return self._enqueue(text)

    def wake(self) -> bool:
        """Give the lead a turn on its inbox alone, now or after the running turn; False
        when such a turn is already waiting."""
        with self._cond:
            if None in self._queue:
                return False
        self._enqueue(None)
        return True

    def _enqueue(self, item: Any) -> bool:
        with self._cond:
            self._queue.append(item)
            if self._busy:
                return False
            self._busy = True
        threading.Thread(target=self._work, name="lead-turn", daemon=True).start()
        return True

    def interrupt(self) -> bool:
        """Stop the running turn (queued messages are dropped); False when idle."""
        with self._cond:
            if not self._busy:
                return False
            self._queue.clear()
        self.agent.interrupt()
        return True

    def wait_idle(self, timeout: float) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: not self._busy, timeout)

    def _next(self) -> tuple[bool, Any]:
        """(False, None) when the queue is empty (then idle), else (True, the next item)."""
        with self._cond:
            if not self._queue:
                self._busy = False
                self.started_at = None
                self._cond.notify_all()
                return False, None
            self.started_at = time.monotonic()
            return True, self._queue.pop(0)

    def _work(self) -> None:
        while True:
            more, text = self._next()
            if not more:
                break
            self.on_change()
            try:
                self._turn(text)
            except Exception as exc:  # a bug in a turn must not kill the session
                self.runtime.events.emit(
                    AgentError("lead", f"{type(exc).__name__}: {exc}", "internal")
                )
        self.on_change()

    def _turn(self, item: Any) -> None:
        """One turn: the unread inbox, then `item` (None: the inbox alone; no turn if empty).
        A custom command (ui/custom_commands.py) is prepared here, on this thread, so its
        snippets can wait for an approval, and its turn runs in its scope. A typed text
        passes the UserPromptSubmit hooks first (they may drop it)."""
        prepare = getattr(item, "prepare", None)
        if prepare is None:
            self._run(item)
            return
        text = prepare(self.agent)
        if self.agent.cancel_event.is_set():  # interrupted while a snippet ran: no turn
            self.runtime.events.emit(Notice("lead", f"{item.shown}: interrupted; nothing was "
                                            "sent to the model"))
            return
        with item.scope(self.agent):
            self._run(text)

    def _run(self, text: str | None) -> None:
        typed = text
        if text is not None and self.hooks is not None:
            text = self.hooks.prompt(text)
            if text is None:
                return  # dropped by a hook (it said why); the inbox waits for the next turn
        block = self.runtime.team.lead_inbox_block()
        parts: list = [part for part in (block, text) if part]
        if not parts:
            return  # a wake-up whose messages an earlier turn already took in
        if typed:  # images and PDFs the prompt names go with it (ui/attachments.py)
            from .attachments import for_prompt  # images, PDFs: at the first prompt

            parts += for_prompt(self.runtime, typed).blocks
        try:
            content = parts if len(parts) > 1 else parts[0]
            if self.hooks is not None:
                self.last_result = self.hooks.run_turn(self.agent, content)
            else:
                self.last_result = self.agent.run_turn(content)
        finally:
            with self._cond:
                self.turns += 1
                self._cond.notify_all()
