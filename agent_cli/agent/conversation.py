"""The message list one agent sends to the model, and the Messages API's validity rules for it.

Rules (what the API answers 400 to when broken):
- the first message is a user message and roles alternate;
- no message has empty content and no text block is blank;
- every assistant tool_use is answered by a tool_result with its id in the very next user
  message, tool_result blocks come before any text there, and no tool_result refers to a
  tool_use that is not in the message just before it;
- a request never ends with an assistant message (no prefill).

`Conversation` keeps these true as messages are added (user content is merged into a trailing
user turn, blank text is dropped); `validate()` lists what is broken (tests assert it is empty
for every request) and `repair()` rebuilds a valid list from anything (a restored transcript).
Messages are treated as immutable: changes replace a message, never edit it in place, so a
recorded request never changes after the fact.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from ..models.base import Block, Message, TextBlock, ToolResultBlock, ToolUseBlock

INTERRUPTED = "interrupted by the user"
RESUMED = "(conversation resumed)"


def text_blocks(texts: Iterable[str]) -> list[Block]:
    """Non-blank strings as text blocks (blank ones are dropped: the API refuses them)."""
    return [TextBlock(text=t) for t in texts if t and t.strip()]


def _ordered(blocks: Iterable[Block]) -> list[Block]:
    """User content with tool_result blocks first, as the API requires."""
    blocks = list(blocks)
    results = [b for b in blocks if isinstance(b, ToolResultBlock)]
    return results + [b for b in blocks if not isinstance(b, ToolResultBlock)]


def _clean(message: Message) -> Message | None:
    """Drop blank text and blocks of the wrong role; None when nothing is left."""
    wrong = ToolUseBlock if message.role == "user" else ToolResultBlock
    kept = [
        b
        for b in message.content
        if not isinstance(b, wrong) and not (isinstance(b, TextBlock) and not b.text.strip())
    ]
    if not kept:
        return None
    if message.role == "user":
        kept = _ordered(kept)
    if kept == list(message.content):
        return message
    return Message(role=message.role, content=kept)


def answers_for(uses: Sequence[ToolUseBlock], text: str = INTERRUPTED) -> list[Block]:
    """An is_error tool_result for each tool_use (used when a call never ran)."""
    return [ToolResultBlock(tool_use_id=u.id, content=text, is_error=True) for u in uses]


class Conversation:
    """An agent's messages, kept valid as they are added. Not thread-safe: one turn at a time."""

    def __init__(self, messages: Iterable[Message] = ()) -> None:
        self._messages: list[Message] = list(messages)

    def __len__(self) -> int:
        return len(self._messages)

    def __iter__(self) -> Iterator[Message]:
        return iter(self._messages)

    @property
    def messages(self) -> list[Message]:
        return list(self._messages)

    def last(self) -> Message | None:
        return self._messages[-1] if self._messages else None

    def add_user(self, blocks: Sequence[Block]) -> Message | None:
        """Add user content, merged into the last message when it is already a user turn.

        Returns the resulting user message, or None when `blocks` held nothing to send.
        """
        blocks = [b for b in blocks if not (isinstance(b, TextBlock) and not b.text.strip())]
        if not blocks:
            return None
        last = self.last()
        if last is not None and last.role == "user":
            merged = Message(role="user", content=_ordered([*last.content, *blocks]))
            self._messages[-1] = merged
            return merged
        msg = Message(role="user", content=_ordered(blocks))
        self._messages.append(msg)
        return msg

    def add_assistant(self, message: Message) -> Message | None:
        """Append an assistant turn (blank text dropped); None if nothing was left of it."""
        cleaned = _clean(message)
        if cleaned is None:
            return None
        last = self.last()
        if last is None:
            self._messages.append(Message(role="user", content=text_blocks([RESUMED])))
        elif last.role == "assistant":
            if last.tool_uses():
                self.add_user(answers_for(last.tool_uses()))
            else:
                cleaned = Message(role="assistant", content=[*last.content, *cleaned.content])
                self._messages[-1] = cleaned
                return cleaned
        self._messages.append(cleaned)
        return cleaned

    def unanswered(self) -> list[ToolUseBlock]:
        """The tool_use blocks of a trailing assistant message (they still need results)."""
        last = self.last()
        return last.tool_uses() if last is not None and last.role == "assistant" else []

    def replace(self, messages: Iterable[Message]) -> None:
        self._messages = list(messages)

    def prepend_text(self, text: str) -> None:
        """Open the first user message with `text` (after its tool_results, if any)."""
        if not self._messages or self._messages[0].role != "user":
            self._messages.insert(0, Message(role="user", content=text_blocks([text])))
            return
        first = self._messages[0]
        results = [b for b in first.content if isinstance(b, ToolResultBlock)]
        rest = [b for b in first.content if not isinstance(b, ToolResultBlock)]
        content = [*results, TextBlock(text=text), *rest]
        self._messages[0] = Message(role="user", content=content)


def validate(messages: Sequence[Message], *, for_request: bool = True) -> list[str]:
    """Every way `messages` breaks the API's rules, as readable strings ([] = valid)."""
    problems: list[str] = []
    if not messages:
        return ["conversation is empty"] if for_request else []
    if messages[0].role != "user":
        problems.append("first message is not a user message")
    pending: set[str] = set()
    used: set[str] = set()
    for i, msg in enumerate(messages):
        where = f"message {i} ({msg.role})"
        if i and msg.role == messages[i - 1].role:
            problems.append(f"{where}: two {msg.role} messages in a row")
        if not msg.content:
            problems.append(f"{where}: empty content")
        for b in msg.content:
            if isinstance(b, TextBlock) and not b.text.strip():
                problems.append(f"{where}: blank text block")
        if msg.role == "assistant":
            problems += _check_assistant(msg, where, pending)
            ids = [u.id for u in msg.tool_uses()]
            if len(set(ids)) != len(ids) or used & set(ids):
                problems.append(f"{where}: a tool_use id is used twice")
            used |= set(ids)
            pending = set(ids)
        else:
            problems += _check_user(msg, where, pending)
            pending = set()
    if pending:
        problems.append(f"tool_use {sorted(pending)} at the end has no tool_result")
    if for_request and messages[-1].role != "user":
        problems.append("last message is an assistant message (prefill)")
    return problems


def _check_assistant(msg: Message, where: str, pending: set[str]) -> list[str]:
    out = []
    if pending:
        out.append(f"{where}: tool_use {sorted(pending)} before it was never answered")
    if any(isinstance(b, ToolResultBlock) for b in msg.content):
        out.append(f"{where}: tool_result in an assistant message")
    return out


def _check_user(msg: Message, where: str, pending: set[str]) -> list[str]:
    out = []
    if any(isinstance(b, ToolUseBlock) for b in msg.content):
        out.append(f"{where}: tool_use in a user message")
    ids = [b.tool_use_id for b in msg.content if isinstance(b, ToolResultBlock)]
    for tid in ids:
        if tid not in pending:
            out.append(f"{where}: tool_result {tid} answers no tool_use of the previous message")
    if len(set(ids)) != len(ids):
        out.append(f"{where}: duplicate tool_result ids")
    missing = pending - set(ids)
    if missing:
        out.append(f"{where}: tool_use {sorted(missing)} not answered here")
    seen_text = False
    for b in msg.content:
        if isinstance(b, ToolResultBlock) and seen_text:
            out.append(f"{where}: tool_result after text")
            break
        seen_text = seen_text or not isinstance(b, ToolResultBlock)
    return out


def repair(messages: Iterable[Message]) -> list[Message]:
    """A valid conversation built from `messages`, losing as little as possible.

    Blank text and misplaced blocks are dropped, same-role neighbours merged, stray
    tool_results removed, and every unanswered tool_use gets an "interrupted" error result.
    A trailing assistant message without tool_use is kept (the next user turn follows it).
    """
    out: list[Message] = []
    seen: set[str] = set()
    for raw in messages:
        msg = _clean(raw)
        if msg is not None and msg.role == "assistant":
            msg = _unique_uses(msg, seen)
        if msg is None:
            continue
        if msg.role == "user":
            _repair_user(out, msg)
        else:
            _repair_assistant(out, msg)
    if out and out[-1].role == "assistant" and out[-1].tool_uses():
        out.append(Message(role="user", content=answers_for(out[-1].tool_uses())))
    return out


def _unique_uses(msg: Message, seen: set[str]) -> Message | None:
    """Drop tool_use blocks whose id was already used (the API refuses duplicates)."""
    kept: list[Block] = []
    for b in msg.content:
        if isinstance(b, ToolUseBlock):
            if b.id in seen:
                continue
            seen.add(b.id)
        kept.append(b)
    if len(kept) == len(msg.content):
        return msg
    return Message(role="assistant", content=kept) if kept else None


def _repair_user(out: list[Message], msg: Message) -> None:
    prev = out[-1] if out else None
    expected = {u.id: u for u in prev.tool_uses()} if prev and prev.role == "assistant" else {}
    blocks: list[Block] = []
    answered: set[str] = set()
    for b in msg.content:
        if isinstance(b, ToolResultBlock):
            if b.tool_use_id not in expected or b.tool_use_id in answered:
                continue
            answered.add(b.tool_use_id)
        blocks.append(b)
    missing = [u for tid, u in expected.items() if tid not in answered]
    blocks = answers_for(missing) + blocks
    if not blocks:
        return
    if prev is not None and prev.role == "user":
        out[-1] = Message(role="user", content=_ordered([*prev.content, *blocks]))
    else:
        out.append(Message(role="user", content=_ordered(blocks)))


def _repair_assistant(out: list[Message], msg: Message) -> None:
    if not out:
        out.append(Message(role="user", content=text_blocks([RESUMED])))
    prev = out[-1]
    if prev.role == "assistant":
        if prev.tool_uses():
            out.append(Message(role="user", content=answers_for(prev.tool_uses())))
        else:
            out[-1] = Message(role="assistant", content=[*prev.content, *msg.content])
            return
    out.append(msg)
