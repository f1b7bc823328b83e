"""Extended thinking: which kind an agent asks for, from flags, settings and the environment,
and what that adds to a Messages API request.

Sources, strongest first: `--no-thinking` (off), `--thinking [N]` (on; N is the budget),
a teammate's own `thinking` (spawn_teammate), `MAX_THINKING_TOKENS` (as Claude Code reads it:
a budget; 0 turns it off), then `"thinking"` in the settings layers (`{"type": "enabled",
"budget_tokens": N}`, `{"type": "adaptive"}` or `{"type": "disabled"}`). Off by default.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

MIN_BUDGET = 1024  # the API's smallest budget_tokens
# Claude 4 models before adaptive thinking interleave thinking between tool calls only with
# this beta header; later ones do it by themselves, and others refuse the header.
INTERLEAVED_BETA = "interleaved-thinking-2025-05-14"
_NEEDS_BETA = re.compile(r"^(?:anthropic[./])?claude-(?:opus-4|opus-4-1|sonnet-4|sonnet-4-5|"
                         r"haiku-4-5)(?:-\d{8})?(?:-v\d+(?::\d+)?)?$")
DEFAULT_BUDGET = 10_000  # `--thinking` with no budget
ENV = "MAX_THINKING_TOKENS"


class ThinkingError(ValueError):
    """A thinking setting that cannot be used; the message names where it came from."""


@dataclass(frozen=True)
class Thinking:
    """Extended thinking for one agent: a fixed budget ("enabled") or "adaptive"."""

    kind: Literal["enabled", "adaptive"] = "enabled"
    budget_tokens: int = DEFAULT_BUDGET

    def param(self) -> dict[str, Any]:
        """The request's `thinking` parameter."""
        if self.kind == "adaptive":
            return {"type": "adaptive"}
        return {"type": "enabled", "budget_tokens": self.budget_tokens}

    def describe(self) -> str:
        return "adaptive" if self.kind == "adaptive" else f"budget {self.budget_tokens} tokens"


def max_tokens_for(thinking: Mapping[str, Any] | None, requested: int) -> int:
    """max_tokens for a request: the API requires it above a fixed thinking budget, so the
    budget is added on top of what the answer itself may use."""
    if not thinking or thinking.get("type") != "enabled":
        return requested
    budget = int(thinking.get("budget_tokens", 0))
    return requested if requested > budget else budget + requested


def interleave_headers(model: str, thinking: Mapping[str, Any] | None) -> dict[str, str]:
    """Extra request headers so a fixed-budget Claude 4 model thinks between tool calls too."""
    if not thinking or thinking.get("type") != "enabled" or not _NEEDS_BETA.match(model):
        return {}
    return {"anthropic-beta": INTERLEAVED_BETA}


def parse_setting(value: Any, where: str) -> Thinking | None:
    """The settings value `"thinking"`; None when disabled; ThinkingError when malformed."""
    if value is None or value is False:
        return None
    if value is True:
        return Thinking()
    if not isinstance(value, dict):
        raise ThinkingError(f"{where}: 'thinking' must be an object like "
                            '{"type": "enabled", "budget_tokens": 10000}')
    kind = value.get("type")
    if kind == "disabled":
        return None
    if kind == "adaptive":
        return Thinking("adaptive")
    if kind == "enabled":
        return Thinking("enabled", _budget(value.get("budget_tokens", DEFAULT_BUDGET), where))
    raise ThinkingError(f"{where}: thinking.type {kind!r} is not one of enabled, adaptive, "
                        "disabled")


def _budget(raw: Any, where: str) -> int:
    try:
        budget = int(raw)
    except (TypeError, ValueError):
        raise ThinkingError(f"{where}: the thinking budget {raw!r} is not a number") from None
    if isinstance(raw, bool) or budget < MIN_BUDGET:
        raise ThinkingError(f"{where}: the thinking budget must be at least {MIN_BUDGET} tokens "
                            f"(got {raw!r})")
    return budget


def resolve(flag: bool | int | None, env: Mapping[str, str], setting: Any,
            setting_where: str = "settings") -> Thinking | None:
    """The session's thinking. `flag`: False (--no-thinking), True (--thinking), an int
    (--thinking N) or None (not given)."""
    if flag is False:
        return None
    if isinstance(flag, int) and not isinstance(flag, bool):
        return Thinking("enabled", _budget(flag, "--thinking"))
    raw = env.get(ENV, "").strip()
    if raw:
        if raw == "0":
            return Thinking() if flag else None
        return Thinking("enabled", _budget(raw, ENV))
    chosen = parse_setting(setting, setting_where)
    if flag and chosen is None:
        return Thinking()
    return chosen


def for_teammate(value: bool | int | None, session: Thinking | None) -> Thinking | None:
    """A teammate's thinking: its own spawn argument (on, off or a budget), else the
    session's."""
    if value is None:
        return session
    if value is False:
        return None
    if value is True:
        return session or Thinking()
    return Thinking("enabled", _budget(value, "spawn_teammate thinking"))
