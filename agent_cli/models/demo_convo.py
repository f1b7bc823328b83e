"""Reading a conversation the way the offline demo model needs to: nothing else.

The demo model keeps no state between calls, so everything it decides comes from here: where
the current turn opened (the last user message that carries text, not only tool results),
which tool calls it made since and what came back, and the tagged blocks the host injects
(`<auto-claimed-task ...>`, `<inbox>`, `<message from=...>`). Parsers are tolerant: a block's
fields may come as attributes, as JSON, or as `key: value` lines.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from .base import Message, TextBlock, ToolResultBlock, ToolUseBlock

ATTR_RE = re.compile(r"""([\w-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>"']+))""")
UUID_RE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
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
        return self.result.content if self.result is not None else "(no result)"


@dataclass
class Block:
    """A tagged block: its attributes and body."""

    tag: str
    attrs: dict[str, str] = field(default_factory=dict)
    body: str = ""


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


def parse_attrs(raw: str) -> dict[str, str]:
    attrs: dict[str, str] = {}
    for m in ATTR_RE.finditer(raw):
        attrs[m.group(1).lower().replace("-", "_")] = next(
            g for g in (m.group(2), m.group(3), m.group(4)) if g is not None
        )
    return attrs


def find_blocks(text: str, tag: str) -> list[Block]:
    """All `<tag ...>body</tag>` blocks (a self-closed or unclosed tag gets an empty body)."""
    pattern = re.compile(
        rf"<{re.escape(tag)}\b([^>]*?)/?>(?:(.*?)</{re.escape(tag)}>)?", re.DOTALL
    )
    return [
        Block(tag, parse_attrs(m.group(1) or ""), (m.group(2) or "").strip())
        for m in pattern.finditer(text)
    ]


def body_fields(body: str) -> dict[str, Any]:
    """Fields of a block body given as JSON or as `key: value` lines (the last key may span
    several lines, e.g. a multi-line description)."""
    stripped = body.strip()
    if stripped.startswith("{"):
        try:
            data = json.loads(stripped)
        except ValueError:
            data = None
        if isinstance(data, dict):
            return {str(k).lower(): v for k, v in data.items()}
    fields: dict[str, Any] = {}
    key: str | None = None
    for line in body.splitlines():
        m = re.match(r"^\s*([A-Za-z_][\w ]{0,30}?)\s*:\s?(.*)$", line)
        if m and m.group(1).lower().replace(" ", "_") in KNOWN_FIELDS:
            key = m.group(1).lower().replace(" ", "_")
            fields[key] = m.group(2)
        elif key is not None:
            fields[key] = f"{fields[key]}\n{line}"
    return {k: v.strip() if isinstance(v, str) else v for k, v in fields.items()}


KNOWN_FIELDS = {
    "id", "task_id", "subject", "description", "claim_token", "token", "blocked_by",
    "blockedby", "verify", "from", "type", "request_id", "content", "plan", "status",
}


def language(text: str) -> str:
    """'zh' when the text has Chinese characters, else 'en'."""
    return "zh" if CJK_RE.search(text) else "en"


def first_line(text: str, limit: int = 120) -> str:
    for line in text.splitlines():
        if line.strip():
            line = line.strip()
            return line if len(line) <= limit else line[: limit - 1] + "…"
    return ""


@dataclass
class Reply:
    """What the demo answers with: text, then tool calls `(name, input)`.

    `phase` tags the calls' ids so the next request can tell which step it is at."""

    text: str = ""
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    phase: int | None = None


def task_id_in(text: str) -> int | None:
    """The task id a tool result names ("created task #3", {"id": 3}, "task 3 ...")."""
    for pattern in (r"#(\d+)", r'"id"\s*:\s*(\d+)', r"\btask\s+(\d+)", r"\bid[=:\s]+(\d+)"):
        m = re.search(pattern, text, re.IGNORECASE)
        if m:
            return int(m.group(1))
    return None
