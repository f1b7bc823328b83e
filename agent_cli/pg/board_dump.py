"""A team's shared state as plain data (`Dump`), read from a workdir's `.tasks/` and `.team/`
files or written into a fresh directory: the file side of `agent-cli board migrate`.

Reading never follows a link and never writes: a file that is not a regular file, is over
its cap or does not parse is named in `problems` and left out (the database side refuses a
dump whose kept tasks depend on a left-out one). Writing builds the files the file stores
read (the formats of `.tasks/README.md` and `.team/README.md`) in a directory nobody uses
yet; pg/migrate.py moves it into place.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from ..board.eventlog import read_events
from ..board.journal import Journal, write_journal
from ..board.leases import MAX_LEDGER_BYTES, TOKEN_RE
from ..board.models import Task, parse_task
from ..errors import CorruptFile, StorageError, UnusableFile
from ..fsutil import JSON_CAP, atomic_write_json, ensure_dir, open_dir, read_state, utc_now
from ..jsonlines import read_jsonl
from ..names import NAME_RE
from ..team.mailbox import Mailbox, MailMessage, parse_line
from ..team.protocol import FILE_VERSION, ProtocolRequest, ProtocolStore
from ..team.roster import Member, Roster

TASK_RE = re.compile(r"task_([1-9][0-9]{0,17})\.json")
INBOX_CAP = 1 << 30  # an inbox bigger than this is not copied (named in the problems)
BIGINT = 1 << 63
EVENT_KEYS = {"time": str, "actor": str, "action": str, "task_id": int, "details": dict}


@dataclass
class Inbox:
    """One inbox: its messages in order, how many of them were acknowledged, and the ids
    marked delivered (the database keeps them; the files keep them in transcripts)."""

    messages: list[MailMessage] = field(default_factory=list)
    cursor: int = 0
    delivered: set[str] = field(default_factory=set)


@dataclass
class Dump:
    """Everything `board migrate` carries between the two backends."""

    tasks: list[Task] = field(default_factory=list)
    next_id: int = 1  # the next id to hand out: ids are never reused
    events: list[dict[str, Any]] = field(default_factory=list)  # events.jsonl records
    tokens: dict[str, tuple[int, str]] = field(default_factory=dict)  # token -> (id, fate)
    team: str = "default"
    members: list[Member] = field(default_factory=list)
    inboxes: dict[str, Inbox] = field(default_factory=dict)
    requests: list[ProtocolRequest] = field(default_factory=list)
    protocol_log: list[dict[str, Any]] = field(default_factory=list)
    stamp: tuple[str, int] | None = None  # (epoch, seq) of the source board
    problems: list[str] = field(default_factory=list)  # "<file>: why; not copied"

    def counts(self) -> str:
        """'3 tasks, 9 events, 2 members, 4 messages in 2 inboxes, 1 protocol request'."""
        messages = sum(len(i.messages) for i in self.inboxes.values())
        return (f"{len(self.tasks)} tasks, {len(self.events)} events, {len(self.tokens)} claim "
                f"tokens, {len(self.members)} members, {messages} messages in "
                f"{len(self.inboxes)} inboxes, {len(self.requests)} protocol requests")


# ----- reading a workdir's files -----------------------------------------------------------

def read_files(workdir: Path) -> Dump:
    """The team state in `workdir`'s `.tasks/` and `.team/` (nothing written)."""
    dump = Dump()
    tasks_dir, team_dir = Path(workdir) / ".tasks", Path(workdir) / ".team"
    _read_tasks(tasks_dir, dump)
    _read_next_id(tasks_dir, dump)
    _read_events(tasks_dir, dump)
    _read_tokens(tasks_dir, dump)
    _read_roster(team_dir, dump)
    _read_inboxes(team_dir, dump)
    _read_protocols(team_dir, dump)
    return dump


def _names(directory: Path, dump: Dump) -> list[str]:
    """The entries of a state directory reached without following a link ([] if none)."""
    if not os.path.lexists(directory):
        return []
    try:
        fd = open_dir(directory)
    except (OSError, StorageError) as exc:
        dump.problems.append(f"{directory}: not a directory agent-cli may read ({exc}); "
                             "nothing in it copied")
        return []
    try:
        return sorted(os.listdir(fd))
    finally:
        os.close(fd)


def _read_tasks(tasks_dir: Path, dump: Dump) -> None:
    found = []
    for name in _names(tasks_dir, dump):
        match = TASK_RE.fullmatch(name)
        if not match:
            continue
        path = tasks_dir / name
        try:
            raw = read_state(path, JSON_CAP)
            if raw is None:
                continue
            task = parse_task(raw, int(match.group(1)))
        except (StorageError, ValueError) as exc:
            dump.problems.append(f"{path}: {_why(exc)}; not copied")
            continue
        why = unstorable(task.to_json()) or _bad_time(
            task.created_at, task.updated_at, task.claimed_at, task.lease_expires_at)
        if why:
            dump.problems.append(f"{path}: {why}; not copied")
        else:
            found.append(task)
    dump.tasks = sorted(found, key=lambda t: t.id)


def _read_next_id(tasks_dir: Path, dump: Dump) -> None:
    high = max((t.id for t in dump.tasks), default=0) + 1
    path = tasks_dir / ".next_id"
    try:
        raw = read_state(path, 64)
        if raw is not None:
            high = max(high, int(raw.strip()))
    except (StorageError, ValueError) as exc:
        dump.problems.append(f"{path}: {_why(exc)}; ids continue after the highest task")
    dump.next_id = high


def _read_events(tasks_dir: Path, dump: Dump) -> None:
    records, problems = read_events(tasks_dir / "events.jsonl")
    dump.problems.extend(f"{p.line()}; not copied" for p in problems)
    for number, record in enumerate(records, 1):
        why = "is not a board event" if not all(
            isinstance(record.get(k), t) for k, t in EVENT_KEYS.items()) else \
            unstorable(record) or _bad_time(record["time"])
        if why:
            dump.problems.append(f"{tasks_dir / 'events.jsonl'}: record {number} {why}; "
                                 "not copied")
        else:
            dump.events.append(record)


def _read_tokens(tasks_dir: Path, dump: Dump) -> None:
    path = tasks_dir / "tokens"
    try:
        raw = read_state(path, MAX_LEDGER_BYTES) or b""
    except StorageError as exc:
        dump.problems.append(f"{path}: {_why(exc)}; not copied (tokens of the tasks are)")
        raw = b""
    complete = raw[: raw.rfind(b"\n") + 1].decode("utf-8", "replace")
    for line in complete.splitlines():  # the ledger's own reading rules (leases.TokenLedger)
        parts = line.split()
        if len(parts) == 3 and parts[0] in ("c", "x", "d", "r") and \
                TOKEN_RE.fullmatch(parts[1]) and parts[2].isdigit() and len(parts[2]) < 19:
            dump.tokens[parts[1]] = (int(parts[2]), parts[0])
    for task in dump.tasks:  # a claim older than the ledger still holds its token
        if task.claim_token and task.claim_token not in dump.tokens:
            dump.tokens[task.claim_token] = (task.id, "c")


def _read_roster(team_dir: Path, dump: Dump) -> None:
    roster = Roster(team_dir)
    try:
        config = roster.load()
    except CorruptFile as exc:
        dump.problems.append(f"{exc}; not copied")
        return
    if config is None:
        return
    dump.team = config.team
    for member in config.members:
        why = unstorable(member.model_dump())
        if why is None and member.pid is not None and not 0 <= member.pid < 1 << 31:
            why = f"pid {member.pid} is not a process id"
        if why:
            dump.problems.append(f"{roster.path}: member {member.name}: {why}; not copied")
        else:
            dump.members.append(member)


def _read_inboxes(team_dir: Path, dump: Dump) -> None:
    inbox_dir = team_dir / "inbox"
    mailbox = Mailbox(team_dir)
    for entry in _names(inbox_dir, dump):
        name = entry.removesuffix(".jsonl")
        if not entry.endswith(".jsonl") or not NAME_RE.fullmatch(name):
            continue  # cursors, locks, quarantine copies: read with their inbox
        path = inbox_dir / entry
        try:
            raw = read_state(path, INBOX_CAP) or b""
        except StorageError as exc:
            dump.problems.append(f"{path}: {_why(exc)}; not copied")
            continue
        dump.inboxes[name] = _inbox(path, name, raw, mailbox.cursor(name), dump)


def _inbox(path: Path, name: str, raw: bytes, offset: int, dump: Dump) -> Inbox:
    """The messages of one inbox file; the cursor (a byte offset) as a message count. A
    message id already taken (by this inbox or another) is a resend: not copied again."""
    inbox, start = Inbox(), 0
    seen = {m.id for i in dump.inboxes.values() for m in i.messages}
    while (end := raw.find(b"\n", start)) >= 0:
        line = raw[start:end]
        if line.strip():
            try:
                msg = parse_line(line, name)
            except ValueError as exc:
                dump.problems.append(f"{path}: line at byte {start}: {exc}; not copied")
            else:
                why = unstorable(msg.model_dump()) or (
                    f"id {msg.id[:40]!r} is already copied" if msg.id in seen else None)
                if why:
                    dump.problems.append(f"{path}: line at byte {start}: {why}; not copied")
                    start = end + 1
                    continue
                inbox.messages.append(msg)
                seen.add(msg.id)
                if end + 1 <= offset:
                    inbox.cursor = len(inbox.messages)
        start = end + 1
    return inbox


def _read_protocols(team_dir: Path, dump: Dump) -> None:
    store = ProtocolStore(team_dir)
    try:
        requests = store.load()
    except CorruptFile as exc:
        dump.problems.append(f"{exc}; not copied")
        requests = []
    for req in requests:
        why = unstorable(req.model_dump())
        if why:
            dump.problems.append(f"{store.path}: request {req.id[:8]}: {why}; not copied")
        else:
            dump.requests.append(req)
    try:
        records, bad = read_jsonl(store.log_path)
    except UnusableFile as exc:
        dump.problems.append(f"{exc}; not copied")
        return
    dump.protocol_log = [r for r in records if isinstance(r, dict) and not unstorable(r)]
    dump.problems.extend(f"{p.where}: malformed line; not copied" for p in bad)


def unstorable(value: Any) -> str | None:
    """Why PostgreSQL cannot hold `value` as it is (a NUL in a text, an integer past
    bigint), or None. Checked before a copy, so the file is named instead of the copy
    failing as a whole."""
    if isinstance(value, str):
        return "holds a NUL character" if "\x00" in value else None
    if isinstance(value, bool) or value is None or isinstance(value, float):
        return None
    if isinstance(value, int):
        return None if -BIGINT <= value < BIGINT else f"number {value} is too large"
    items = value.items() if isinstance(value, dict) else enumerate(value) \
        if isinstance(value, list | tuple) else ()
    for key, item in items:
        why = unstorable(key) or unstorable(item)
        if why:
            return why
    return None


def _bad_time(*values: str | None) -> str | None:
    for value in values:
        if value is None:
            continue
        try:
            datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return f"time {value[:40]!r} is not an ISO 8601 time"
    return None


def _why(exc: BaseException) -> str:
    detail = getattr(exc, "detail", None)
    return f"is {detail}" if isinstance(exc, UnusableFile) and detail else str(exc)


# ----- writing files -----------------------------------------------------------------------

def write_files(dump: Dump, root: Path) -> None:
    """`.tasks/` and `.team/` under `root` (a fresh directory) holding `dump`."""
    tasks_dir, team_dir = root / ".tasks", root / ".team"
    ensure_dir(tasks_dir)
    for task in dump.tasks:
        atomic_write_json(tasks_dir / f"task_{task.id}.json", task.to_json(), fsync=False)
    (tasks_dir / ".next_id").write_text(f"{dump.next_id}\n")
    _write_lines(tasks_dir / "events.jsonl", [_compact(r) for r in dump.events])
    token_lines = []
    for token, (task_id, fate) in dump.tokens.items():
        token_lines.append(f"c {token} {task_id}")
        if fate != "c":
            token_lines.append(f"{fate} {token} {task_id}")
    _write_lines(tasks_dir / "tokens", token_lines)
    if dump.stamp is not None and dump.stamp[1] > 0:  # ids in events.jsonl follow this stamp
        ids = ",".join(str(t.id) for t in dump.tasks)
        epoch, seq = dump.stamp
        write_journal(tasks_dir / ".stamp", Journal(epoch, seq, (f"{seq}:{ids}",)))
    ensure_dir(team_dir / "inbox")
    if dump.members:
        atomic_write_json(team_dir / "config.json", {
            "team": dump.team, "updated_at": utc_now(),
            "members": [m.model_dump() for m in dump.members]}, fsync=False)
    for name, inbox in dump.inboxes.items():
        lines = [m.to_line() for m in inbox.messages]
        _write_lines(team_dir / "inbox" / f"{name}.jsonl", lines)
        if inbox.cursor:
            offset = sum(len(line.encode("utf-8")) + 1 for line in lines[: inbox.cursor])
            atomic_write_json(team_dir / "inbox" / f"{name}.cursor",
                              {"offset": offset, "updated_at": utc_now()}, fsync=False)
    if dump.requests:
        atomic_write_json(team_dir / "requests.json", {
            "version": FILE_VERSION,
            "requests": [r.model_dump() for r in dump.requests]}, fsync=False)
    _write_lines(team_dir / "protocol.log.jsonl",
                 [json.dumps(r, ensure_ascii=False, default=str) for r in dump.protocol_log])


def _compact(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


def _write_lines(path: Path, lines: list[str]) -> None:
    if lines:
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
