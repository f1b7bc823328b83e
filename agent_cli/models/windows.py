"""How many tokens a model's context holds: what the endpoint's model information says
(`max_input_tokens`, asked once per adapter), else the table shipped with agent-cli
(windows.json, checked against Anthropic's model pages), else its stated default.

Auto-compaction starts at `AUTO_COMPACT_SHARE` of the window (less when the reply's
max_tokens would not fit in what is left), unless --compact-at / AGENT_CLI_COMPACT_AT set a
number.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

from ..pricing import canonical_name

AUTO_COMPACT_SHARE = 0.8
FALLBACK_DEFAULT = 128_000


@dataclass(frozen=True)
class Window:
    """A context window and where its size came from: endpoint, table or default."""

    tokens: int
    source: str

    def threshold(self, reply_tokens: int) -> int:
        """The size past which a conversation is compacted: a share of the window, lowered
        so that a reply of `reply_tokens` still fits."""
        share = int(self.tokens * AUTO_COMPACT_SHARE)
        return max(1, min(share, self.tokens - reply_tokens))


class WindowTable:
    """Model id -> context window tokens (windows.json)."""

    def __init__(self, windows: Mapping[str, int], default: int = FALLBACK_DEFAULT) -> None:
        self.windows = dict(windows)
        self.default = default

    @classmethod
    def load(cls) -> WindowTable:
        text = resources.files("agent_cli.models").joinpath("windows.json").read_text("utf-8")
        return cls.parse(json.loads(text))

    @classmethod
    def parse(cls, data: Mapping[str, Any]) -> WindowTable:
        windows = {str(k): int(v) for k, v in (data.get("models") or {}).items()}
        return cls(windows, int(data.get("default_tokens") or FALLBACK_DEFAULT))

    def lookup(self, model: str | None) -> int | None:
        name = canonical_name(model, self.windows)
        return self.windows[name] if name is not None else None


def window_of(model: Any, table: WindowTable) -> Window:
    """`model`'s window: its endpoint's word (an adapter with `context_window()`), the
    table's, or the default."""
    ask = getattr(model, "context_window", None)
    said = ask() if callable(ask) else None
    if isinstance(said, int) and not isinstance(said, bool) and said > 0:
        return Window(said, "endpoint")
    listed = table.lookup(getattr(model, "name", None))
    if listed:
        return Window(listed, "table")
    return Window(table.default, "default")
