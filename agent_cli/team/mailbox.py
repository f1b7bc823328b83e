"""Inboxes: one append-only JSONL file per agent under .team/inbox/, read at least once.

Mailbox owns the inbox files and their reading progress. A send appends one whole line under
the inbox's lock; a reader `fetch`es the complete lines past its acknowledged cursor and
`ack`s the byte offset it has taken in, so a crash between the two redelivers rather than
loses. An incomplete last line is left for later; a malformed complete line is copied to the
inbox's quarantine file (with the file and offset it came from) and skipped. Nothing is ever
deleted or rewritten: the inbox only grows, the cursor only moves forward.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..errors import StorageError, UnusableFile, UserError
from ..fsutil import (
    append_line,
    atomic_write_json,
    open_state,
    parse_json,
    read_state,
    utc_now,
)
from ..jsonlines import read_jsonl
from ..names import NAME_RE, check_name
from . import StateLock, set_aside
from .inbox_scan import scan

log = logging.getLogger(__name__)

MsgType = Literal[
    "message",
    "broadcast",
    "result",
    "idle_notification",
    "error",
    "shutdown_request",
    "shutdown_response",
    "plan_approval_request",
    "plan_approval_response",
]
MSG_TYPES: tuple[str, ...] = get_args(MsgType)
PROTOCOL_TYPES = frozenset(
    {"shutdown_request", "shutdown_response", "plan_approval_request", "plan_approval_response"}
)
RESPONSE_TYPES = frozenset({"shutdown_response", "plan_approval_response"})
CURSOR_CAP = 4096  # a cursor file is one small JSON object
UNREAD_SCAN_CAP = 8 * 1024 * 1024  # unread_count looks at most this far past the cursor


class MailMessage(BaseModel):
    """One inbox line. On disk the sender is the key "from"; in Python it is `sender`."""

    model_config = ConfigDict(defer_build=True, populate_by_name=True, extra="ignore")

    id: str
    type: MsgType
    sender: str = Field(alias="from")
    to: str
    content: str
    ts: str
    request_id: str | None = None
    approve: bool | None = None
    plan: str | None = None

    @field_validator("sender", "to")
    @classmethod
    def _slug(cls, value: str) -> str:
        if not NAME_RE.fullmatch(value):
            raise ValueError(f"{value!r} is not a valid agent name")
        return value

    def to_line(self) -> str:
        """The compact JSON line stored in an inbox (protocol fields only when set)."""
        data = self.model_dump(by_alias=True, exclude_none=True)
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


@dataclass
class Delivery:
    """What `fetch` found: unread messages, the offset to `ack` once they are taken in, and
    one warning per malformed line quarantined during this fetch."""

    messages: list[MailMessage]
    cursor: int
    problems: list[str] = field(default_factory=list)
    unusable: str = ""  # why the inbox itself could not be read (a link, FIFO, directory...)


def parse_line(raw: bytes, inbox: str) -> MailMessage:
    """Parse one inbox line; ValueError with a short reason if it is not a message for `inbox`."""
    try:
        msg = MailMessage.model_validate(parse_json(raw.decode("utf-8")))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "message"
        raise ValueError(f"not a message ({where}: {first['msg']})") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        raise ValueError(f"not JSON ({exc})") from None
    if msg.to != inbox:
        raise ValueError(f"addressed to {msg.to!r}, found in {inbox!r}'s inbox")
    return msg


def build_message(
    sender: str,
    to: str,
    content: str,
    type: str = "message",
    request_id: str | None = None,
    approve: bool | None = None,
    plan: str | None = None,
) -> MailMessage:
    """A new message (fresh id, now), or a one-line UserError saying what is wrong with it:
    the checks every mailbox backend makes before it stores anything."""
    check_name(sender, "sender name")
    check_name(to, "recipient name")
    if type not in MSG_TYPES:
        raise UserError(f"unknown message type {type!r} (use one of: {', '.join(MSG_TYPES)})")
    if not isinstance(content, str):
        raise UserError("message content must be text")
    if type in PROTOCOL_TYPES and not request_id:
        raise UserError(f"a {type} message needs a request_id")
    if type not in PROTOCOL_TYPES and (request_id or approve is not None or plan):
        raise UserError(f"a {type} message cannot carry request_id, approve or plan")
    if type in RESPONSE_TYPES and not isinstance(approve, bool):
        raise UserError(f"a {type} message needs approve=true or approve=false")
    return MailMessage(
        id=uuid.uuid4().hex,
        type=type,
        sender=sender,
        to=to,
        content=content,
        ts=utc_now(),
        request_id=request_id,
        approve=approve,
        plan=plan,
    )


class Mailbox:
    """The inboxes under `team_dir`/inbox. `on_change` is called after every in-process send."""

    def __init__(self, team_dir: Path, on_change: Callable[[], None] | None = None) -> None:
        self.team_dir = Path(team_dir)
        self.inbox_dir = self.team_dir / "inbox"
        self._on_change = on_change
        self._locks: dict[str, StateLock] = {}
        self._locks_guard = threading.Lock()

    _build = staticmethod(build_message)

    # ---- paths and locks -------------------------------------------------------------

    def inbox_path(self, name: str) -> Path:
        """`.team/inbox/<name>.jsonl`; InvalidName before any path is built."""
        return self.inbox_dir / f"{check_name(name, 'inbox name')}.jsonl"

    def cursor_path(self, name: str) -> Path:
        return self.inbox_dir / f"{check_name(name, 'inbox name')}.cursor"

    def quarantine_path(self, name: str) -> Path:
        return self.inbox_dir / f"{check_name(name, 'inbox name')}.quarantine.jsonl"

    def _lock(self, name: str) -> StateLock:
        check_name(name, "inbox name")
        with self._locks_guard:
            if name not in self._locks:
                self._locks[name] = StateLock(self.inbox_dir / f"{name}.lock")
            return self._locks[name]

    # ---- writing ---------------------------------------------------------------------

    def send(
        self,
        sender: str,
        to: str,
        content: str,
        type: str = "message",
        *,
        request_id: str | None = None,
        approve: bool | None = None,
        plan: str | None = None,
    ) -> MailMessage:
        """Append one message to `to`'s inbox and return it (with its new id)."""
        msg = build_message(sender, to, content, type, request_id, approve, plan)
        path = self.inbox_path(to)
        with self._lock(to).held():
            append_line(path, msg.to_line())
        if self._on_change is not None:
            self._on_change()
        return msg

    def broadcast(self, sender: str, content: str, recipients: list[str]) -> list[MailMessage]:
        """Send `content` as type broadcast to every recipient but the sender (each once).

        Every name is checked before anything is written, so a bad name sends nothing.
        """
        check_name(sender, "sender name")
        targets: list[str] = []
        for name in recipients:
            check_name(name, "recipient name")
            if name != sender and name not in targets:
                targets.append(name)
        return [self.send(sender, name, content, "broadcast") for name in targets]

    # ---- reading ---------------------------------------------------------------------

    def fetch(self, name: str) -> Delivery:
        """Unread complete messages past the acknowledged cursor. Consumes nothing.

        An inbox that is not a regular file (a symlink, FIFO, directory...) is never read:
        the Delivery is empty and its problem names the file (the next send sets it aside).
        """
        path = self.inbox_path(name)
        start, problems = self._read_cursor(name)
        try:
            fd = open_state(path, os.O_RDONLY)
        except FileNotFoundError:
            return Delivery([], start, problems)
        except UnusableFile as exc:
            log.warning("%s; not read", exc)
            return Delivery([], start, [*problems, f"{exc}; not read"], unusable=str(exc))
        except OSError as exc:
            raise _read_error(path, exc) from exc
        try:
            size = os.fstat(fd).st_size
            if start > size:
                problems.append(
                    f"{path} is shorter ({size} bytes) than its cursor ({start}); "
                    "rereading it from the start"
                )
                start = 0
            messages, bad, end = scan(fd, start, lambda raw: parse_line(raw, name))
        except OSError as exc:
            raise _read_error(path, exc) from exc
        finally:
            os.close(fd)
        if bad:
            problems.extend(self._quarantine(name, bad))
        for problem in problems:
            log.warning("%s", problem)
        return Delivery(messages, end, problems)

    def peek(self, name: str) -> list[MailMessage]:
        """The unread messages, without acknowledging anything."""
        return self.fetch(name).messages

    def ack(self, name: str, cursor: int) -> None:
        """Record that everything before byte `cursor` was taken in. Never moves backwards."""
        if isinstance(cursor, bool) or not isinstance(cursor, int) or cursor < 0:
            raise UserError(f"invalid cursor {cursor!r}: use the cursor fetch returned")
        path = self.inbox_path(name)
        with self._lock(name).held():
            current, problems = self._read_cursor(name)
            size = self._size(path)
            if cursor > size:
                raise UserError(f"cursor {cursor} is past the end of {path} ({size} bytes)")
            if cursor > 0 and self._byte_at(path, cursor - 1) != b"\n":
                raise UserError(f"cursor {cursor} is not at a line boundary of {path}")
            if current > size:  # the inbox was truncated by hand: the old cursor is stale
                current = 0
            if problems:  # a corrupt cursor file: keep it for inspection, write a fresh one
                set_aside(self.cursor_path(name))
            elif cursor <= current:
                return
            atomic_write_json(self.cursor_path(name), {"offset": cursor, "updated_at": utc_now()})

    def cursor(self, name: str) -> int:
        """The acknowledged offset of `name`'s inbox (0 if never acknowledged)."""
        return self._read_cursor(name)[0]

    def stamp(self, name: str) -> tuple[int, int]:
        """(size, mtime_ns) of the inbox, (0, 0) if absent: changes on every append."""
        path = self.inbox_path(name)
        try:
            st = os.stat(path, follow_symlinks=False)
        except FileNotFoundError:
            return (0, 0)
        except OSError as exc:
            raise _read_error(path, exc) from exc
        return (st.st_size, st.st_mtime_ns)

    def unread_stamp(self, name: str) -> tuple[int, ...]:
        """Cheap: changes when a message arrives in `name`'s inbox or its cursor moves
        (stats only; nothing is read or written)."""
        sig: tuple[int, ...] = ()
        for path in (self.inbox_path(name), self.cursor_path(name)):
            try:
                st = os.stat(path, follow_symlinks=False)
                sig += (st.st_size, st.st_mtime_ns, st.st_ino)
            except OSError:
                sig += (-1, -1, -1)
        return sig

    def unread_count(self, name: str, cap: int = UNREAD_SCAN_CAP) -> int:
        """How many complete lines wait past the cursor (at most `cap` bytes looked at).
        Never writes (no quarantine, no set-aside): for watchers; an unusable inbox is 0."""
        offset = self._read_cursor(name)[0]
        try:
            fd = open_state(self.inbox_path(name), os.O_RDONLY)
        except (OSError, UnusableFile):
            return 0
        try:
            size = os.fstat(fd).st_size
            data = os.pread(fd, cap, offset if offset <= size else 0)
        except OSError:
            return 0
        finally:
            os.close(fd)
        return sum(1 for line in data.split(b"\n")[:-1] if line.strip())

    def quarantined(self, name: str) -> list[dict]:
        """The quarantine records of `name`'s inbox (file, offset, raw line, error, ts)."""
        # a torn or corrupt record of our own is skipped: the inbox line is still there
        try:
            return read_jsonl(self.quarantine_path(name))[0]
        except UnusableFile as exc:  # never read; the next quarantined line sets it aside
            log.warning("%s; not read", exc)
            return []

    # ---- internals -------------------------------------------------------------------

    def _read_cursor(self, name: str) -> tuple[int, list[str]]:
        path = self.cursor_path(name)
        try:
            raw = read_state(path, CURSOR_CAP)
            if raw is None:
                return 0, []
            data = parse_json(raw.decode("utf-8"))
            offset = data["offset"]
            if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
                raise ValueError(f"bad offset {offset!r}")
            return offset, []
        except UnusableFile as exc:  # a link, FIFO, directory: set aside by the next ack
            return 0, [f"{exc}; redelivering the inbox from the start"]
        except (ValueError, KeyError, TypeError) as exc:
            return 0, [f"{path} is corrupt ({exc}); redelivering the inbox from the start"]

    def _quarantine(self, name: str, bad: list[tuple[int, bytes, str]]) -> list[str]:
        """Copy malformed lines to the quarantine file once each; return warnings for new ones."""
        inbox = self.inbox_path(name)
        qpath = self.quarantine_path(name)
        warnings = []
        with self._lock(name).held():
            seen = {r.get("offset") for r in self.quarantined(name) if isinstance(r, dict)}
            for offset, raw, error in bad:
                if offset in seen:
                    continue
                record = {
                    "file": str(inbox),
                    "offset": offset,
                    "line": raw.decode("utf-8", errors="replace"),
                    "error": error,
                    "ts": utc_now(),
                }
                append_line(qpath, json.dumps(record, ensure_ascii=False))
                warnings.append(
                    f"{inbox}: malformed line at byte {offset} ({error}); copied to {qpath.name}"
                )
        return warnings

    @staticmethod
    def _size(path: Path) -> int:
        try:
            fd = open_state(path, os.O_RDONLY)
        except FileNotFoundError:
            return 0
        except OSError as exc:
            raise _read_error(path, exc) from exc
        try:
            return os.fstat(fd).st_size
        finally:
            os.close(fd)

    @staticmethod
    def _byte_at(path: Path, offset: int) -> bytes:
        try:
            fd = open_state(path, os.O_RDONLY)
        except OSError as exc:
            raise _read_error(path, exc) from exc
        try:
            return os.pread(fd, 1, offset)
        finally:
            os.close(fd)


def _read_error(path: Path, exc: OSError) -> StorageError:
    """One line naming the file: `.team/inbox/lead.jsonl` being a directory is no traceback."""
    return StorageError(f"cannot read {path}: {exc.strerror or exc}")
