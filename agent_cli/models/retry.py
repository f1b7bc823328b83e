"""Patient, visible retries of a model call: exponential backoff with jitter, retry-after
honoured, bounded by a number of attempts and a time budget, cancellable.

RetryPolicy is the configuration (RuntimeConfig.retry; `from_env` reads AGENT_CLI_RETRY_*);
Retrier is one call's state: `wait(error)` decides whether the error is worth another
attempt, tells the caller what it is about to do (`on_wait(RetryInfo)`, e.g. an event the
toolbar shows as "retrying in 4 s (overloaded, attempt 3/8)"), and sleeps on the caller's
cancel event, so Esc ends the wait at once. Retried: rate limits (429), overloaded (529),
5xx and connection failures, unless the server said `x-should-retry: false`.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import Interrupted, ModelError, UserError

ENV_ATTEMPTS = "AGENT_CLI_RETRY_ATTEMPTS"
ENV_BUDGET = "AGENT_CLI_RETRY_BUDGET_S"
ENV_BASE = "AGENT_CLI_RETRY_BASE_S"


@dataclass(frozen=True)
class RetryPolicy:
    """attempts: requests in all (1 = never retry); budget_s: no wait starts that would end
    past this many seconds after the first attempt; base_s doubles per attempt up to cap_s,
    each wait drawn between half and all of it (jitter)."""

    attempts: int = 8
    budget_s: float = 90.0
    base_s: float = 1.0
    cap_s: float = 30.0

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> RetryPolicy:
        """The default policy with AGENT_CLI_RETRY_ATTEMPTS / _BUDGET_S / _BASE_S applied."""
        policy = cls()
        values = {}
        for var, name, kind in (
            (ENV_ATTEMPTS, "attempts", int),
            (ENV_BUDGET, "budget_s", float),
            (ENV_BASE, "base_s", float),
        ):
            raw = (env.get(var) or "").strip()
            if not raw:
                continue
            try:
                value = kind(raw)
            except ValueError:
                raise UserError(f"{var}: {raw!r} is not a number") from None
            if value < (1 if kind is int else 0) or value != value or value == float("inf"):
                raise UserError(f"{var}: {raw!r} is out of range")
            values[name] = value
        if values:
            policy = cls(**{**policy.__dict__, **values})
        return policy

    def backoff(self, attempt: int, rng: random.Random) -> float:
        """The wait after failed attempt number `attempt` (1-based), jitter included."""
        full = min(self.cap_s, self.base_s * (2 ** (attempt - 1)))
        return full * (0.5 + rng.random() / 2)


@dataclass(frozen=True)
class RetryInfo:
    """What the retrier is about to do: wait `delay_s`, then send attempt `attempt + 1`."""

    attempt: int  # the attempt that failed (1-based)
    attempts: int
    delay_s: float
    kind: str  # the error's kind: overloaded, rate_limited, connection, ...
    message: str


@dataclass
class Retrier:
    """One model call's retries. `wait` returns True to try again, False to give up; it
    raises Interrupted when `cancel` is set during the wait."""

    policy: RetryPolicy
    cancel: threading.Event
    on_wait: Callable[[RetryInfo], None] = lambda info: None
    rng: random.Random = field(default_factory=random.Random)
    attempt: int = 1
    started: float = field(default_factory=time.monotonic)

    def wait(self, error: ModelError) -> bool:
        if not getattr(error, "retryable", False) or self.attempt >= self.policy.attempts:
            return False
        server = getattr(error, "retry_after", None)
        delay = server if server is not None else self.policy.backoff(self.attempt, self.rng)
        if time.monotonic() - self.started + delay > self.policy.budget_s:
            return False
        self.on_wait(RetryInfo(self.attempt, self.policy.attempts, delay, error.kind, str(error)))
        if self.cancel.wait(delay):
            raise Interrupted("interrupted")
        self.attempt += 1
        return True

    def gave_up(self) -> str:
        """' (gave up after 8 attempts in 87 s)' once it retried at all, else ''."""
        if self.attempt <= 1:
            return ""
        spent = time.monotonic() - self.started
        return f" (gave up after {self.attempt} attempts in {spent:.0f} s)"


def retry_after_s(headers: Any) -> float | None:
    """The server's wait in seconds from `retry-after-ms` or `retry-after` (seconds or an
    HTTP date), else None."""
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return max(0.0, float(ms) / 1000)
        raw = headers.get("retry-after")
        if raw is None:
            return None
        try:
            return max(0.0, float(raw))
        except ValueError:
            import email.utils

            when = email.utils.parsedate_to_datetime(str(raw)).timestamp()
            return max(0.0, when - time.time())
    except (TypeError, ValueError, AttributeError):
        return None
