"""An agent's full history on disk: `.team/transcripts/<name>.jsonl`, one JSON record a line.

Records (each with `ts`, `agent` and `kind`):
- `message`: `{"message": {role, content}, "merged": bool}` — a message as it was added;
  `merged` means it extended the previous user turn instead of starting a new one;
  `delivered` (optional) lists the inbox message ids this record took in (agent/delivered.py).
- `compaction`: `{"reason", "summary", "messages": [...], "before_tokens", "after_tokens"}` —
  the whole conversation as it continued after a compaction (older records stay on disk).
- `clear`: the conversation was cleared (/clear).
- `delivered`: `{"delivered": [ids]}` — inbox messages the host handled for the agent without
  putting them in its conversation (ignored when rebuilding it).

Images and PDFs are kept (base64) unless a record would pass the line cap: then they are
written as placeholders naming them. `load_conversation()` rebuilds the conversation from the
last compaction/clear on; a torn or unparsable line is skipped and reported by file name and
line number. Appends are not fsynced: a transcript is a log, and losing its last line in a
power cut is acceptable.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import UnusableFile
from ..fsutil import LINE_CAP, append_line, ensure_dir, utc_now
from ..jsonlines import read_jsonl
from ..models.base import Message
from ..names import check_name
from .conversation import Conversation, repair
from .media import without_media

TOO_BIG_WHY = "not kept in the transcript: too big for one record"


class Transcript:
    """Appends one agent's records to `<directory>/<name>.jsonl`."""

    def __init__(self, directory: Path, agent: str) -> None:
        self.agent = check_name(agent, "agent name")
        self.path = Path(directory) / f"{agent}.jsonl"

    def _write(self, kind: str, **fields: Any) -> None:
        record = {"ts": utc_now(), "agent": self.agent, "kind": kind, **fields}
        ensure_dir(self.path.parent)  # StorageError naming it (a file or a link there)
        append_line(self.path, json.dumps(record, ensure_ascii=False), fsync=False)

    def _fitting(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        """The messages as JSON; when their images and PDFs would make the record longer
        than a readable line, those are kept as placeholders instead (named, not lost
        silently: a resumed conversation says what was there)."""
        dumped = [m.model_dump(mode="json") for m in messages]
        if sum(len(json.dumps(d)) for d in dumped) < LINE_CAP - 64 * 1024:
            return dumped
        return [m.model_dump(mode="json") for m in without_media(messages, TOO_BIG_WHY)]

    def message(
        self, message: Message, merged: bool = False, delivered: Sequence[str] = ()
    ) -> None:
        extra = {"delivered": list(delivered)} if delivered else {}
        self._write("message", message=self._fitting([message])[0], merged=merged, **extra)

    def compaction(
        self,
        reason: str,
        summary: str,
        messages: Sequence[Message],
        before_tokens: int,
        after_tokens: int,
    ) -> None:
        self._write(
            "compaction",
            reason=reason,
            summary=summary,
            messages=self._fitting(messages),
            before_tokens=before_tokens,
            after_tokens=after_tokens,
        )

    def clear(self) -> None:
        self._write("clear")

    def taken_in(self, ids: Sequence[str]) -> None:
        """Inbox messages the host handled for this agent, outside its conversation."""
        self._write("delivered", delivered=list(ids))


def read_records(path: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """All parsable records of a transcript, and one problem string per bad line (a torn
    last line too: its writer was killed, nobody will complete it)."""
    try:
        records, bad = read_jsonl(path, report_torn=True, check=_not_a_record)
    except UnusableFile as exc:  # a link, FIFO, directory or over its cap: never read
        return [], [f"{exc}; not read"]
    return records, [f"{p}, skipped" for p in bad]


def _not_a_record(record: dict[str, Any]) -> str | None:
    return None if "kind" in record else "not a transcript record"


def load_conversation(path: Path) -> tuple[list[Message], list[str]]:
    """The conversation a transcript ends with (valid for the API), and the problems met."""
    records, problems = read_records(path)
    conv = Conversation()
    for i, rec in enumerate(records):
        try:
            _apply(conv, rec)
        except (ValidationError, TypeError, KeyError) as exc:
            kind = rec.get("kind")
            problems.append(f"{path}: record {i + 1} ({kind}) is malformed, skipped: {exc}")
    return repair(conv.messages), problems


def _apply(conv: Conversation, rec: dict[str, Any]) -> None:
    kind = rec["kind"]
    if kind == "clear":
        conv.replace([])
    elif kind == "compaction":
        conv.replace([Message.model_validate(m) for m in rec["messages"]])
    elif kind == "message":
        msg = Message.model_validate(rec["message"])
        if msg.role == "user":
            conv.add_user(msg.content)  # merges exactly where the live conversation did
        else:
            conv.add_assistant(msg)
