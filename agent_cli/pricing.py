"""Token usage in dollars: the price table (`pricing.json`, shipped in the wheel) and a
ledger of one agent's usage per model, priced only where the table knows the model.

A model the table does not know (a local server, a new name) is counted in tokens and
reported as unpriced: never a guessed price. Each response is booked under its model and
price tier (a long prompt can cost more: `long_prompt` in the table), so switching models
mid-session (`/model`) prices each part at its own rates.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

KINDS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)
PROMPT_KINDS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
SERVER_KINDS = ("web_search_requests", "web_fetch_requests")  # priced per use, not per token
BASE, LONG = "base", "long_prompt"
_DATE = re.compile(r"-\d{8}$")
_SUFFIX = re.compile(r"\[[^\]]*\]$")  # claude-sonnet-4-6[1m]
_BEDROCK = re.compile(r"-v\d+(:\d+)?$")


@dataclass(frozen=True)
class Rates:
    """Dollars per million tokens of each kind."""

    input: float
    output: float
    cache_write: float
    cache_read: float

    def cost(self, counts: Mapping[str, int]) -> float:
        return (
            counts.get("input_tokens", 0) * self.input
            + counts.get("output_tokens", 0) * self.output
            + counts.get("cache_creation_input_tokens", 0) * self.cache_write
            + counts.get("cache_read_input_tokens", 0) * self.cache_read
        ) / 1_000_000


@dataclass(frozen=True)
class ModelPrice:
    base: Rates
    long_threshold: int | None = None
    long: Rates | None = None

    def tier(self, prompt_tokens: int) -> str:
        if self.long is not None and self.long_threshold is not None:
            return LONG if prompt_tokens > self.long_threshold else BASE
        return BASE

    def rates(self, tier: str) -> Rates:
        return self.long if tier == LONG and self.long is not None else self.base


def _rates(data: Mapping[str, Any]) -> Rates:
    return Rates(*(float(data[k]) for k in ("input", "output", "cache_write", "cache_read")))


class PriceTable:
    """Model id -> prices; `lookup` also knows dated, `[1m]` and Bedrock spellings."""

    def __init__(self, models: Mapping[str, ModelPrice], checked: str = "",
                 source: str = "", per_use: Mapping[str, float] | None = None) -> None:
        self.models = dict(models)
        self.checked = checked
        self.source = source
        self.per_use = dict(per_use or {})  # dollars per server tool use (web search)

    def uses_cost(self, row: Mapping[str, Any]) -> float:
        return sum(_uses(row)[k] * self.per_use.get(k, 0.0) for k in SERVER_KINDS)

    @classmethod
    def load(cls, path: Path | None = None) -> PriceTable:
        """The table shipped with agent-cli (or the file at `path`)."""
        if path is None:
            text = resources.files("agent_cli").joinpath("pricing.json").read_text("utf-8")
        else:
            text = Path(path).read_text("utf-8")
        return cls.parse(json.loads(text))

    @classmethod
    def parse(cls, data: Mapping[str, Any]) -> PriceTable:
        models = {}
        for name, entry in data.get("models", {}).items():
            long = entry.get("long_prompt")
            models[name] = ModelPrice(
                base=_rates(entry),
                long_threshold=int(long["threshold_tokens"]) if long else None,
                long=_rates(long) if long else None,
            )
        per_use = {k: float(v) for k, v in (data.get("server_tools") or {}).items()
                   if k in SERVER_KINDS}
        return cls(models, str(data.get("checked", "")), str(data.get("source", "")), per_use)

    def canonical(self, model: str | None) -> str | None:
        """The table's id for `model`, or None when the table does not price it."""
        return canonical_name(model, self.models)

    def lookup(self, model: str | None) -> ModelPrice | None:
        name = self.canonical(model)
        return self.models[name] if name is not None else None


def canonical_name(model: str | None, known: Container[str]) -> str | None:
    """The name in `known` that `model` spells (dated, `[1m]` and Bedrock spellings too)."""
    if not model:
        return None
    name = model.strip().lower()
    for prefix in ("anthropic.", "anthropic/", "us.anthropic.", "eu.anthropic."):
        name = name.removeprefix(prefix)
    for pattern in (None, _SUFFIX, _BEDROCK, _DATE):
        if pattern is not None:
            name = pattern.sub("", name)
        if name in known:
            return name
    return None


def _counts(data: Mapping[str, Any]) -> dict[str, int]:
    out = {}
    for kind in KINDS:
        value = data.get(kind, 0)
        out[kind] = value if isinstance(value, int) and not isinstance(value, bool) else 0
    return out


def _uses(data: Mapping[str, Any]) -> dict[str, int]:
    out = {}
    for kind in SERVER_KINDS:
        value = data.get(kind, 0)
        out[kind] = value if isinstance(value, int) and not isinstance(value, bool) else 0
    return out


def prompt_tokens(counts: Mapping[str, int]) -> int:
    return sum(counts.get(k, 0) for k in PROMPT_KINDS)


class Ledger:
    """One agent's usage, booked per (model, tier). Thread-safe: the agent's thread adds,
    the UI and the roster writer read."""

    def __init__(self, table: PriceTable | None = None) -> None:
        self._table = table
        self._lock = threading.Lock()
        self._rows: dict[tuple[str, str], dict[str, int]] = {}

    def _price(self, model: str) -> ModelPrice | None:
        if self._table is None:
            self._table = PriceTable.load()
        return self._table.lookup(model)

    def add(self, model: str, usage: Mapping[str, Any]) -> None:
        """Book one response's usage (`usage` has the Messages API's four counts)."""
        counts = _counts(usage)
        uses = {k: n for k, n in _uses(usage).items() if n}
        if not any(counts.values()) and not uses:
            return
        price = self._price(model)
        tier = price.tier(prompt_tokens(counts)) if price is not None else BASE
        with self._lock:
            row = self._rows.setdefault((model, tier), dict.fromkeys(KINDS, 0))
            for kind, n in [*counts.items(), *uses.items()]:
                row[kind] = row.get(kind, 0) + n

    def rows(self) -> list[dict[str, Any]]:
        """[{model, tier, input_tokens, ...}] (what the roster stores for a teammate)."""
        with self._lock:
            return [{"model": m, "tier": t, **dict(c)} for (m, t), c in self._rows.items()]


@dataclass(frozen=True)
class Cost:
    """Usage priced: `usd` is the sum over priced models (None when no token was priced);
    tokens with no price are counted in `unpriced_tokens`, their models named."""

    usd: float | None
    tokens: int
    unpriced_tokens: int = 0
    unpriced_models: tuple[str, ...] = ()

    @property
    def complete(self) -> bool:
        return self.unpriced_tokens == 0

    def text(self) -> str:
        """"$0.0123", "$1.20 + unpriced", or "-" when nothing was priced."""
        if self.usd is None:
            return "-"
        return format_usd(self.usd) + ("" if self.complete else " + unpriced")


def format_usd(usd: float) -> str:
    if usd == 0:
        return "$0.00"
    if usd < 0.01:
        return f"${usd:.4f}"
    if usd < 100:
        return f"${usd:.2f}"
    return f"${usd:,.0f}"


def price_rows(rows: Iterable[Mapping[str, Any]], table: PriceTable) -> Cost:
    """Price ledger rows (from Ledger.rows() or a roster member's `spend`)."""
    usd: float | None = None
    tokens = unpriced = 0
    missing: list[str] = []
    for row in rows:
        if not isinstance(row, Mapping):
            continue  # a hand-edited file: skip what is not a row
        counts = _counts(row)
        n = sum(counts.values())
        tokens += n
        model = str(row.get("model") or "")
        price = table.lookup(model)
        if price is None:
            unpriced += n
            if n and model not in missing:
                missing.append(model or "unknown")
            continue
        usd = (usd or 0.0) + price.rates(str(row.get("tier") or BASE)).cost(counts) \
            + table.uses_cost(row)
    return Cost(usd, tokens, unpriced, tuple(missing))


def combine(costs: Iterable[Cost]) -> Cost:
    usd: float | None = None
    tokens = unpriced = 0
    missing: list[str] = []
    for c in costs:
        if c.usd is not None:
            usd = (usd or 0.0) + c.usd
        tokens += c.tokens
        unpriced += c.unpriced_tokens
        missing += [m for m in c.unpriced_models if m not in missing]
    return Cost(usd, tokens, unpriced, tuple(missing))


def member_rows(spend: list[dict[str, Any]] | None, tokens: int, model: str | None
                ) -> list[dict[str, Any]]:
    """A roster member's ledger rows. One written before prices existed has only a token
    total: it is shown as unpriced tokens, never priced by guessing their kind."""
    if spend:
        return list(spend)
    if tokens:
        return [{"model": f"{model or '?'} (not itemized)", "tier": BASE,
                 "input_tokens": int(tokens)}]
    return []


def totals(rows: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """The four counts summed over rows."""
    out = dict.fromkeys(KINDS, 0)
    for row in rows:
        if not isinstance(row, Mapping):
            continue
        for kind, n in _counts(row).items():
            out[kind] += n
    return out


def cost_report(lead_rows: list[dict[str, Any]], members: Iterable[Any],
                table: PriceTable | None = None) -> dict[str, Any]:
    """The headless report's cost fields: `cost_usd` (priced models only; null when nothing
    was priced), per agent, and the tokens no price covers (`members`: roster members)."""
    prices = table or PriceTable.load()
    costs = {"lead": price_rows(lead_rows, prices)}
    for m in members:
        rows = member_rows(m.spend, int(m.tokens or 0), m.model)
        costs[m.name] = price_rows(rows, prices)
    total = combine(costs.values())
    return {
        "cost_usd": _usd(total.usd),
        "cost_by_agent": {name: _usd(c.usd) for name, c in costs.items()},
        "unpriced_tokens": total.unpriced_tokens,
        "unpriced_models": list(total.unpriced_models),
        "prices_checked": prices.checked,
    }


def _usd(value: float | None) -> float | None:
    return None if value is None else round(value, 6)
