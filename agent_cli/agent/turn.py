"""What a turn is run with and what it returns: the agent's settings, the pre-call hook's
answer (stop, or text to inject) and the turn's result."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import ModelError
from ..models.retry import RetryPolicy
from ..models.thinking import Thinking


@dataclass
class AgentSettings:
    max_rounds: int = 50
    max_tokens: int = 8192
    # auto-compaction past this many tokens; None: a share of the model's window (windows.py)
    compact_threshold_tokens: int | None = None
    keep_recent_turns: int = 6
    micro_compact_min_chars: int = 2000
    retry: RetryPolicy = field(default_factory=lambda: RetryPolicy.from_env(os.environ))
    max_tokens_ceiling: int = 64_000  # a request continuing a call cut by max_tokens gets more
    thinking: Thinking | None = None  # extended thinking (models/thinking.py); None: off
    # the API's own web tools to offer, asked before each request (models/web_tools.py)
    server_tools: Callable[[], list[dict[str, Any]]] | None = None
    # False once the model or server refused an image or PDF: they go as text placeholders
    vision: bool = True


@dataclass
class PreCall:
    """What the pre-call hook wants: stop the turn (with a reason), or inject user text."""

    stop: str | None = None
    inject: list[str] = field(default_factory=list)


@dataclass
class TurnResult:
    """stop_reason: end_turn, max_rounds, max_tokens, interrupted, idle, stopped or error."""

    stop_reason: str
    text: str = ""
    rounds: int = 0
    error: ModelError | None = None
