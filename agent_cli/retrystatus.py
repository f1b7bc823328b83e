"""Who is waiting to retry a model call right now, for the toolbar and /team.

RetryStatus subscribes to the event bus: a RetryWait event marks its agent as waiting until
`until`; the agent's next sign of life (a streamed delta, usage, an error, the end of its
turn) clears it. `describe(agent)` gives "retrying in 4 s (overloaded, attempt 3/8)",
counting down, or "" when the agent is not waiting.
"""

from __future__ import annotations

import threading
import time

from .events import AgentError, Event, RetryWait, TextDeltaEvent, TurnFinished, UsageEvent

_CLEARS = (AgentError, TextDeltaEvent, TurnFinished, UsageEvent)


class RetryStatus:
    """The latest RetryWait per agent, until that agent moves on."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waits: dict[str, RetryWait] = {}

    def on_event(self, event: Event) -> None:
        if isinstance(event, RetryWait):
            with self._lock:
                self._waits[event.agent] = event
        elif isinstance(event, _CLEARS):
            with self._lock:
                self._waits.pop(event.agent, None)

    def describe(self, agent: str, now: float | None = None) -> str:
        with self._lock:
            wait = self._waits.get(agent)
        if wait is None:
            return ""
        return wait.describe(time.monotonic() if now is None else now)

    def waiting(self) -> dict[str, str]:
        """{agent: description} for every agent waiting to retry."""
        with self._lock:
            agents = list(self._waits)
        return {a: d for a in agents if (d := self.describe(a))}
