"""How full an agent's context is, from real counts: the `usage` of the last response, the
count-tokens endpoint when the conversation grew since in a way that may cross the
threshold, and the character estimate (compaction.estimate_tokens) for what no count covers.

Before each request the size is the last real count (`known`, with the estimate of the
conversation at that moment) plus what the estimate says was added since (`growth`). The
estimate can be off about SLACK times either way (code, JSON and non-English text are
denser than four characters a token), so:
- known + growth * SLACK at or below the threshold: below for sure, nothing is asked;
- known + growth / SLACK above it: above for sure, nothing is asked;
- in between: one count_tokens call decides, and becomes the new `known`.
A count is asked only when a big addition (a large tool result, a restored conversation)
may cross the threshold. A model or server without the endpoint is said once per agent,
and the estimate decides from then on.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import AuthFailed, BadRequest, ModelError
from ..events import Event, Notice
from ..models.base import Message, ModelRequest, Usage
from ..models.thinking import max_tokens_for
from ..models.windows import Window, WindowTable, window_of
from .compaction import estimate_tokens
from .turn import AgentSettings

SLACK = 2


@dataclass(frozen=True)
class ContextFigure:
    """What the toolbar shows: tokens in the context, of a window (0: not known yet);
    `exact` when a real count (usage or count_tokens) stands behind it."""

    used: int
    window: int
    exact: bool

    @property
    def percent(self) -> int:
        return min(999, round(100 * self.used / self.window)) if self.window else 0


class ContextMeter:
    """One agent's context size. Its turn thread measures; `figure()` is read from any."""

    def __init__(self, agent: str, emit: Callable[[Event], None]) -> None:
        self._agent = agent
        self._emit = emit
        self._table: WindowTable | None = None
        self._window: tuple[str, Window] | None = None  # (model name, its window)
        self._known: int | None = None  # the last real count of the context
        self._est_at = 0  # the character estimate of the conversation at that count
        self._no_count: tuple[str, str] | None = None  # (model name, why counting is off)
        self._said = False
        self._figure: ContextFigure | None = None
        self.count_calls = 0  # count_tokens requests made (bench/cost.py)

    # -- window and threshold -----------------------------------------------------------

    def window(self, model: Any) -> Window:
        """The model's window (asked of its endpoint once per model, else the table)."""
        name = str(getattr(model, "name", ""))
        if self._window is None or self._window[0] != name:
            if self._table is None:
                self._table = WindowTable.load()
            self._window = (name, window_of(model, self._table))
        return self._window[1]

    def threshold(self, model: Any, settings: AgentSettings) -> int:
        """--compact-at's number when set, else a share of the model's window."""
        if settings.compact_threshold_tokens is not None:
            return settings.compact_threshold_tokens
        thinking = settings.thinking.param() if settings.thinking else None
        return self.window(model).threshold(max_tokens_for(thinking, settings.max_tokens))

    # -- what is known ------------------------------------------------------------------

    def observed(self, usage: Usage, messages: Sequence[Message], system: str) -> None:
        """A response was added: its prompt plus its output is the context now."""
        tokens = (usage.input_tokens + usage.cache_read_input_tokens
                  + usage.cache_creation_input_tokens + usage.output_tokens)
        if tokens <= 0:  # a model that reports no usage: the estimate goes on deciding
            return
        self._known, self._est_at = tokens, estimate_tokens(messages, system)
        self._show(tokens, exact=True)

    def forget(self, estimate: int) -> None:
        """The conversation was replaced (compaction, /clear, a restore): no count covers it."""
        self._known, self._est_at = None, 0
        self._show(estimate, exact=False)

    def guess(self, messages: Sequence[Message], system: str) -> int:
        """The size now, without asking anyone: the last count plus the estimated growth."""
        est = estimate_tokens(messages, system)
        return est if self._known is None else max(0, self._known + est - self._est_at)

    def figure(self) -> ContextFigure | None:
        """The latest reading (None before the first one)."""
        return self._figure

    # -- the decision before a request --------------------------------------------------

    def measure(self, model: Any, messages: Sequence[Message], system: str,
                settings: AgentSettings, request: Callable[[], ModelRequest],
                cancel: threading.Event | None) -> tuple[int, int]:
        """(the next request's context tokens, the auto-compaction threshold); counts with
        the endpoint only when the estimate cannot tell which side of the threshold it is."""
        threshold = self.threshold(model, settings)
        est = estimate_tokens(messages, system)
        base, growth = (0, est) if self._known is None else (self._known, est - self._est_at)
        tokens, exact = max(0, base + growth), self._known is not None and growth == 0
        if growth > 0 and base + growth // SLACK <= threshold < base + growth * SLACK:
            counted = self._count(model, request(), cancel)
            if counted is not None:
                self._known, self._est_at = counted, est
                tokens, exact = counted, True
        self._show(tokens, exact)
        return tokens, threshold

    def _count(self, model: Any, request: ModelRequest,
               cancel: threading.Event | None) -> int | None:
        name = str(getattr(model, "name", ""))
        if self._no_count is not None and self._no_count[0] == name:
            return None
        count = getattr(model, "count_tokens", None)
        if not callable(count):
            self._off(name, f"{name} has no count-tokens endpoint", permanent=True)
            return None
        self.count_calls += 1
        try:
            return int(count(request, cancel))
        except ModelError as exc:  # Interrupted is not one: the turn stops as usual
            # a missing endpoint (404) or a refused one stays off; a busy one is asked again
            self._off(name, f"counting tokens failed: {exc}",
                      permanent=isinstance(exc, BadRequest | AuthFailed))
            return None

    def _off(self, name: str, why: str, permanent: bool) -> None:
        if permanent:
            self._no_count = (name, why)
        if not self._said:
            self._said = True
            self._emit(Notice(self._agent, f"context size estimated from characters ({why})",
                              level="warning"))

    def _show(self, used: int, exact: bool) -> None:
        window = self._window[1].tokens if self._window is not None else 0
        self._figure = ContextFigure(used, window, exact)  # one assignment: readers see a whole
