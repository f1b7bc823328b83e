"""LeadRunner: runs the lead's turns on a worker thread so the terminal stays responsive.

Messages typed while the lead works are queued and sent, in order, when it finishes. Each
turn starts with the lead's unread inbox (teammates' results) prepended. `interrupt()` is
safe from any thread; `wait_idle()` blocks on a condition (tests, exit).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from ..events import AgentError


class LeadRunner:
    def __init__(
        self, runtime: Any, agent: Any, on_change: Callable[[], None] = lambda: None
    ) -> None:
        self.runtime = runtime
        self.agent = agent
        self.on_change = on_change
        self._cond = threading.Condition()
        self._queue: list[str] = []
        self._busy = False
        self.started_at: float | None = None
        self.last_result: Any = None
        self.turns = 0

    @property
    def busy(self) -> bool:
        with self._cond:
            return self._busy

    @property
    def queued(self) -> int:
        with self._cond:
            return len(self._queue)

    def submit(self, text: str) -> bool:
        """Send `text` to the lead; False when it was queued behind a running turn."""
        with self._cond:
            self._queue.append(text)
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

    def _next(self) -> str | None:
        with self._cond:
            if not self._queue:
                self._busy = False
                self.started_at = None
                self._cond.notify_all()
                return None
            self.started_at = time.monotonic()
            return self._queue.pop(0)

    def _work(self) -> None:
        while (text := self._next()) is not None:
            self.on_change()
            try:
                block = self.runtime.team.lead_inbox_block()
                content: str | list[str] = [block, text] if block else text
                self.last_result = self.agent.run_turn(content)
            except Exception as exc:  # a bug in a turn must not kill the session
                self.runtime.events.emit(
                    AgentError("lead", f"{type(exc).__name__}: {exc}", "internal")
                )
            finally:
                with self._cond:
                    self.turns += 1
                    self._cond.notify_all()
        self.on_change()
