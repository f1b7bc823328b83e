"""`--max-turns N`: at most N lead model requests in one headless run (every lead turn of the
run draws from the same budget). Used as the lead's pre-call hook: once the budget is spent
the turn stops before asking the model again."""

from __future__ import annotations

import threading
from typing import Any


class TurnBudget:
    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self.used = 0
        self.exhausted = False
        self._lock = threading.Lock()

    def pre_call(self) -> Any:
        """Count one model request, or ask the turn to stop (PreCall) when none are left."""
        from ..agent.agent import PreCall

        with self._lock:
            if self.limit is None:
                self.used += 1
                return None
            if self.used >= self.limit:
                self.exhausted = True
                return PreCall(stop=f"reached --max-turns {self.limit}")
            self.used += 1
            return None
