"""Keeping a conversation small: micro-compaction, token estimates and summary compaction.

- Micro-compaction replaces large tool_result contents the model has already seen (older than
  the last `keep_recent` user turns) with a short marker, and images and PDFs there (in tool
  results or attached) with a one-line placeholder naming them. Cheap, no model call.
- Summary compaction asks the model (prompts/compact.md, no tools) to summarize the older part
  and continues from one user message `<summary>…</summary>` plus the recent messages. The cut
  is always made just before an assistant message, so no tool_use/tool_result pair is split
  and roles still alternate; a plain-text user turn right before the cut is carried over
  verbatim rather than summarized.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import Interrupted, ModelError
from ..models.base import (
    MEDIA_TYPES,
    Block,
    Message,
    Model,
    ModelRequest,
    ResponseDone,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    media_placeholder,
)
from .media import ELIDED_WHY, media_tokens, replace_media

ELIDED = "[tool output of {n} chars elided; it was seen]"
RENDER_LIMIT = 4000  # chars of one block shown to the summarizer


def estimate_tokens(messages: Sequence[Message], system: str = "") -> int:
    """A rough token count: characters / 4 over the system prompt and every block."""
    chars = len(system)
    for msg in messages:
        for b in msg.content:
            if isinstance(b, TextBlock):
                chars += len(b.text)
            elif isinstance(b, ToolResultBlock):
                chars += len(b.text()) + 40 + 4 * sum(media_tokens(p) for p in b.media())
            elif isinstance(b, MEDIA_TYPES):
                chars += 4 * media_tokens(b)
            elif isinstance(b, ToolUseBlock):
                chars += len(b.name) + len(json.dumps(b.input)) + 40
            else:  # thinking: its text, or a redacted block's opaque data
                chars += len(getattr(b, "thinking", "") or getattr(b, "data", ""))
    return chars // 4


def micro_compact(messages: list[Message], keep_recent: int, min_chars: int) -> int:
    """Elide big tool results older than the last `keep_recent` user turns, in place.

    Messages are replaced (never edited) so recorded requests keep their content.
    Returns the number of characters removed.
    """
    user_seen = 0
    saved = 0
    for i in range(len(messages) - 1, -1, -1):
        msg = messages[i]
        if msg.role != "user":
            continue
        user_seen += 1
        if user_seen <= keep_recent:
            continue
        new_content, media_saved = replace_media(list(msg.content), ELIDED_WHY)
        saved += 4 * media_saved
        changed = bool(media_saved)
        for k, b in enumerate(new_content):
            if isinstance(b, ToolResultBlock) and len(b.text()) > min_chars:
                marker = ELIDED.format(n=len(b.text()))
                saved += len(b.text()) - len(marker)
                new_content[k] = b.model_copy(update={"content": marker})
                changed = True
        if changed:
            messages[i] = Message(role="user", content=new_content)
    return saved


def choose_cut(messages: Sequence[Message], keep_recent: int) -> int | None:
    """Index of the assistant message the kept part starts at, or None if nothing to cut.

    Keeps the last `keep_recent` assistant turns (fewer when the conversation is short),
    and only cuts when something older than the kept part would be summarized.
    """
    assistants = [i for i, m in enumerate(messages) if m.role == "assistant"]
    if not assistants:
        return None
    keep = max(1, min(keep_recent, len(assistants)))
    for k in range(keep, 0, -1):
        cut = assistants[-k]
        if older_part(messages, cut):
            return cut
    return None


def _carried(messages: Sequence[Message], cut: int) -> list[Block]:
    """A plain-text user turn just before the cut is kept verbatim, not summarized."""
    prev = messages[cut - 1] if cut > 0 else None
    if (
        prev is not None
        and prev.role == "user"
        and not any(isinstance(b, ToolResultBlock) for b in prev.content)
    ):
        return list(prev.content)
    return []


def older_part(messages: Sequence[Message], cut: int) -> list[Message]:
    """What a compaction at `cut` summarizes (a carried plain-text user turn is not in it)."""
    end = cut - 1 if _carried(messages, cut) else cut
    return list(messages[:end])


def render(messages: Sequence[Message]) -> str:
    """Messages as plain text for the summarizer."""
    lines: list[str] = []
    for msg in messages:
        for b in msg.content:
            if isinstance(b, TextBlock):
                lines.append(f"[{msg.role}] {_clip(b.text)}")
            elif isinstance(b, ToolUseBlock):
                lines.append(f"[assistant called {b.name}] {_clip(json.dumps(b.input))}")
            elif isinstance(b, ThinkingBlock):
                lines.append(f"[assistant thought] {_clip(b.thinking)}")
            elif isinstance(b, ToolResultBlock):
                status = "error" if b.is_error else "result"
                lines.append(f"[tool {status}] {_clip(b.text())}")
            elif isinstance(b, MEDIA_TYPES):
                lines.append(f"[{msg.role}] {media_placeholder(b)}")
    return "\n".join(lines)


def _clip(text: str) -> str:
    if len(text) <= RENDER_LIMIT:
        return text
    return text[:RENDER_LIMIT] + f" …[{len(text) - RENDER_LIMIT} more chars]"


@dataclass
class Summarizer:
    """Asks a model for a summary of the older part of a conversation."""

    model: Model
    agent: str
    system: str
    max_tokens: int = 4096

    def summarize(
        self, older: Sequence[Message], cancel: threading.Event | None
    ) -> tuple[str, Usage]:
        """The summary text and what it cost; raises ModelError (or Interrupted) on failure."""
        prompt = (
            "Summarize this conversation so the work can continue from your summary alone.\n"
            f"<conversation>\n{render(older)}\n</conversation>"
        )
        request = ModelRequest(
            agent=self.agent,
            system=self.system,
            messages=[Message(role="user", content=[TextBlock(text=prompt)])],
            max_tokens=self.max_tokens,
        )
        done: ResponseDone | None = None
        for ev in self.model.stream(request, cancel):
            if cancel is not None and cancel.is_set():
                raise Interrupted("interrupted")
            if isinstance(ev, ResponseDone):
                done = ev
        if done is None or not done.message.text().strip():
            raise ModelError("the model returned no summary")
        return done.message.text().strip(), done.usage


def compacted(messages: Sequence[Message], cut: int, summary: str) -> list[Message]:
    """The conversation after compaction: `<summary>` user turn + messages from `cut` on."""
    opening: list[Block] = [TextBlock(text=f"<summary>\n{summary}\n</summary>")]
    opening += _carried(messages, cut)
    return [Message(role="user", content=opening), *messages[cut:]]
