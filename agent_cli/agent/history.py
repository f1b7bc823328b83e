"""An agent's conversation and its transcript kept in step: each message added to one is
written to the other, with the inbox ids it carries; a transcript that cannot be written is
reported, never fatal to the turn."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from ..errors import UserError
from ..events import Event, Notice
from ..models.base import Message
from .conversation import Conversation
from .delivered import Delivered
from .transcript import Transcript


class History:
    """Owned by one Agent; used from its turn thread (and its idle-locked operations)."""

    def __init__(self, name: str, transcript_dir: Path | None,
                 emit: Callable[[Event], None]) -> None:
        self.conv = Conversation()
        self.delivered = Delivered()  # inbox message ids taken into this conversation
        self.transcript = Transcript(transcript_dir, name) if transcript_dir else None
        self._name = name
        self._emit = emit

    def add_user(self, blocks: list) -> None:
        """Add user content (merged into a trailing user message); the pending inbox ids
        go into the same transcript record, then count as delivered."""
        last = self.conv.last()
        merged = last is not None and last.role == "user"
        ids = self.delivered.take_pending()
        if self.conv.add_user(blocks) is not None and self.transcript:
            record = Message(role="user", content=blocks)
            transcript = self.transcript
            self.guard(lambda: transcript.message(record, merged, ids))
        self.delivered.commit(ids)

    def add_assistant(self, message: Message) -> Message | None:
        """Add a model response; None when nothing of it was worth keeping."""
        added = self.conv.add_assistant(message)
        if added is not None and self.transcript:
            transcript = self.transcript
            self.guard(lambda: transcript.message(added))
        return added

    def clear(self) -> None:
        """Forget the conversation; the transcript keeps it, with a clear marker."""
        self.conv.replace([])
        if self.transcript:
            self.guard(self.transcript.clear)

    def compacted(self, reason: str, summary: str, messages: Sequence[Message],
                  before: int, after: int) -> None:
        """The conversation now is `messages` (a summary and the recent turns)."""
        self.conv.replace(messages)
        if self.transcript:
            record = self.transcript.compaction
            self.guard(lambda: record(reason, summary, messages, before, after))

    def guard(self, write: Callable[[], None]) -> None:
        """Run a transcript write; a failure becomes a warning."""
        try:
            write()
        except UserError as exc:
            self._emit(Notice(self._name, f"transcript not written: {exc}", level="warning"))
