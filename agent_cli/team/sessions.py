"""Sessions: each REPL or headless run, so that a later run can pick the team up again.

A session lives in `.team/transcripts/sessions/<id>/`: `session.json` (id, start, the process
running it, the teammates it spawned, those still running when it ended) and `lead.jsonl`,
the lead's transcript for that session. Ids sort by start time (`20250131-120000123-1a2b`).
Only the process running a session writes its file (atomically); readers never need a lock.
The last prompt shown by `--resume` is read from the tail of the lead's transcript.

An **empty** session (a REPL opened and closed with nothing said to the lead and nobody
spawned) is not kept: its file is removed when it ends. One that never ended (a crash, a REPL
still open) is skipped by `-c` and listed last.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import threading
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..errors import NotFound, StorageError, UserError
from ..fsutil import atomic_write_json, parse_json, read_state, utc_now
from ..safetext import visible

SESSION_RE = re.compile(r"^\d{8}-\d{9}-[0-9a-f]{4}$")
TAIL_BYTES = 65536
MAX_META_BYTES = 1 << 20


@dataclass
class Session:
    id: str
    started_at: str
    pid: int | None = None
    host: str | None = None
    mode: str = "repl"
    team: list[str] = field(default_factory=list)  # spawned in this session, in order
    suspended: list[str] = field(default_factory=list)  # still running when it ended
    ended_at: str | None = None
    resumed_at: str | None = None
    dir: Path = Path()  # not stored

    @property
    def lead_transcript(self) -> Path:
        return self.dir / "lead.jsonl"

    @property
    def empty(self) -> bool:
        """Nothing happened in it: no teammate spawned and no lead conversation."""
        return not self.team and not self.lead_transcript.exists()

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("dir")
        return data


class SessionStore:
    """The sessions of one workdir (`team_dir` = its `.team/`)."""

    def __init__(self, team_dir: Path) -> None:
        self.root = Path(team_dir) / "transcripts" / "sessions"
        self._lock = threading.Lock()

    def create(self, mode: str) -> Session:
        from .liveness import this_host

        now = datetime.now(UTC)
        sid = f"{now:%Y%m%d-%H%M%S}{now.microsecond // 1000:03d}-{secrets.token_hex(2)}"
        session = Session(sid, utc_now(), os.getpid(), this_host(), mode, dir=self.root / sid)
        self.save(session)
        return session

    def save(self, session: Session) -> None:
        with self._lock:
            atomic_write_json(session.dir / "session.json", session.to_json())

    def note_member(self, session: Session, name: str) -> None:
        if name not in session.team:
            session.team.append(name)
            self.save(session)

    def all(self) -> list[Session]:
        """Every readable session, newest first (an unreadable one is skipped)."""
        try:
            names = [p.name for p in self.root.iterdir()
                     if SESSION_RE.match(p.name) and not p.is_symlink()]  # never followed
        except OSError:
            return []
        found = [s for s in (self._load(n) for n in sorted(names, reverse=True)) if s]
        return found

    def latest(self) -> Session | None:
        """The session used last: started or resumed most recently, skipping empty ones."""
        sessions = [s for s in self.all() if not s.empty]
        return max(sessions, key=lambda s: (s.resumed_at or s.started_at, s.id), default=None)

    def discard(self, session: Session) -> None:
        """Forget an empty session: its file and (when nothing else is in it) its folder.
        Only what this store wrote is removed; a link or anything odd is left alone."""
        path = session.dir / "session.json"
        with self._lock:
            try:
                if path.is_file() and not path.is_symlink():
                    path.unlink()
                session.dir.rmdir()
            except OSError:
                pass  # something else is there: it stays, listed last while it reads empty

    def find(self, ref: str) -> Session:
        """The session whose id is `ref` or starts with it; NotFound / UserError otherwise."""
        matches = [s for s in self.all() if s.id == ref or s.id.startswith(ref)]
        exact = [s for s in matches if s.id == ref]
        if exact:
            return exact[0]
        if not matches:
            raise NotFound(f"no session {ref!r} in this workdir (agent-cli --resume lists them)")
        if len(matches) > 1:
            raise UserError(f"session {ref!r} is ambiguous: {', '.join(s.id for s in matches)}")
        return matches[0]

    def _load(self, sid: str) -> Session | None:
        path = self.root / sid / "session.json"
        try:  # no link anywhere on the way, a regular file, capped, nesting-safe
            raw = read_state(path, MAX_META_BYTES)
            data = parse_json(raw) if raw is not None else None
            if not isinstance(data, dict) or data.get("id") != sid:
                return None
            known = {k: v for k, v in data.items() if k in Session.__dataclass_fields__}
            return Session(**{**known, "dir": self.root / sid})
        except (OSError, StorageError, ValueError, TypeError):
            return None


def previous_lead_transcript(team_dir: Path, current: Session) -> Path | None:
    """The lead transcript of the session used before `current`, if it has one."""
    others = [s for s in SessionStore(team_dir).all() if s.id != current.id and not s.empty]
    latest = max(others, key=lambda s: (s.resumed_at or s.started_at, s.id), default=None)
    if latest is None or not latest.lead_transcript.exists():
        return None
    return latest.lead_transcript


def last_prompt(session: Session) -> str:
    """The last thing the user typed to the lead in `session` ("" when none)."""
    try:
        with open(session.lead_transcript, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            fh.seek(max(0, size - TAIL_BYTES))
            lines = fh.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return ""
    for line in reversed(lines):
        text = _user_text(line)
        if text:
            return text
    return ""


def _user_text(line: str) -> str:
    try:
        rec = json.loads(line)
        msg = rec["message"]
    except (ValueError, KeyError, TypeError):
        return ""
    if rec.get("kind") != "message" or not isinstance(msg, dict) or msg.get("role") != "user":
        return ""
    content = msg.get("content")
    blocks = [content] if isinstance(content, str) else content or []
    for block in reversed(blocks):
        text = block if isinstance(block, str) else (block or {}).get("text", "")
        if isinstance(text, str) and text.strip() and not text.lstrip().startswith("<"):
            return " ".join(text.split())
    return ""


def _clip(text: str, width: int) -> str:
    """`text` in at most `width` characters; a cut one ends with an ellipsis."""
    return text if len(text) <= width else text[: width - 1] + "…"


def session_table(sessions: list[Session]) -> str:
    """`--resume` / `/resume`: one line per session, newest first (what a transcript or a
    session file says is shown through `safetext.visible`)."""
    if not sessions:
        return "no sessions in this workdir yet"
    sessions = sorted(sessions, key=lambda s: s.empty)  # empty ones last, order kept
    lines = [f"{'ID':<23}  {'STARTED (UTC)':<19}  {'TEAM':<24}  LAST PROMPT"]
    for s in sessions:
        team = _clip(visible(", ".join(map(str, s.team)), one_line=True) or "-", 24)
        prompt = _clip(visible(last_prompt(s), one_line=True) or "-", 60)
        started = visible(str(s.started_at)[:19].replace("T", " "), one_line=True)
        lines.append(f"{s.id:<23}  {started:<19}  {team:<24}  {prompt}")
    lines.append("resume one with: agent-cli --resume ID  (or -c for the newest)")
    return "\n".join(lines)
