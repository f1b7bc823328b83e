"""Reading a conversation the way the offline demo model needs to: nothing else.

The demo model keeps no state between calls, so everything it decides comes from here: where
the current turn opened (the last user message that carries text, not only tool results),
which tool calls it made since and what came back. The host's own blocks (tasks, inbox,
messages) are taken apart by agent_cli.framing, which writes them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...shorten import shorten
from ..base import Message, TextBlock, ToolResultBlock, ToolUseBlock

CJK_RE = re.compile(r"[\u3400-\u9fff]")


@dataclass
class Pair:
    """One tool call and its result (None if the result never came)."""

    use: ToolUseBlock
    result: ToolResultBlock | None

    @property
    def ok(self) -> bool:
        return self.result is not None and not self.result.is_error

    @property
    def text(self) -> str:
        return self.result.text() if self.result is not None else "(no result)"


def message_text(msg: Message) -> str:
    return "\n".join(b.text for b in msg.content if isinstance(b, TextBlock))


def is_opening(msg: Message) -> bool:
    """A user message that starts a turn: it carries text, not only tool results."""
    return msg.role == "user" and any(
        isinstance(b, TextBlock) and b.text.strip() for b in msg.content
    )


def last_opening(messages: list[Message]) -> int:
    """Index of the message that opened the current turn (0 if none is found)."""
    for i in range(len(messages) - 1, -1, -1):
        if is_opening(messages[i]):
            return i
    return 0


def count_openings(messages: list[Message]) -> int:
    return sum(1 for m in messages if is_opening(m))


def pairs_since(messages: list[Message], start: int) -> list[Pair]:
    """Every tool call made after `start`, matched with its result, in order."""
    results: dict[str, ToolResultBlock] = {}
    for msg in messages[start:]:
        if msg.role == "user":
            for b in msg.content:
                if isinstance(b, ToolResultBlock):
                    results[b.tool_use_id] = b
    out: list[Pair] = []
    for msg in messages[start:]:
        if msg.role == "assistant":
            out.extend(Pair(u, results.get(u.id)) for u in msg.tool_uses())
    return out


def last_batch(messages: list[Message], start: int) -> list[Pair]:
    """The tool calls of the newest assistant message after `start` (empty if none)."""
    for i in range(len(messages) - 1, start - 1, -1):
        if messages[i].role == "assistant":
            return pairs_since(messages, i) if messages[i].tool_uses() else []
    return []


def language(text: str) -> str:
    """'zh' when the text has Chinese characters, else 'en'."""
    return "zh" if CJK_RE.search(text) else "en"


def first_line(text: str, limit: int = 120) -> str:
    """The first non-blank line, shortened at a word with "…" when it runs past `limit`."""
    for line in text.splitlines():
        if line.strip():
            return shorten(line.strip(), limit)
    return ""


def task_id_in(text: str) -> int | None:
    """The task id a tool result names ("created task #3", {"id": 3}, "task 3 ...")."""
    for pattern in (r"#(\d+)", r'"id"\s*:\s*(\d+)', r"\btask\s+(\d+)", r"\bid[=:\s]+(\d+)"):
        m = re.search(pattern, text, re.IGNORECASE)
        if m:
            return int(m.group(1))
    return None
