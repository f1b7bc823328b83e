"""The roster: who is on the team and what each member is doing, in .team/config.json.

Roster owns config.json: the team name and one entry per member (name, role, model, status,
current task, idle reason, updated_at, and the pid/host of the process running it). Every
change re-reads the file and rewrites it
atomically under .team/.config.lock, so `agent-cli team` in another terminal sees the team
live. A corrupt config.json never crashes a reader: it reads as an empty team with a
`problem` naming the file, and is set aside (renamed, never deleted) by the next write.
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from ..errors import CorruptFile, NotFound, Refused, StorageError, UnusableFile, UserError
from ..fsutil import atomic_write_json, ensure_dir, parse_json, read_state, utc_now
from ..names import NAME_RE, check_name
from . import StateLock, set_aside
from .liveness import this_host  # noqa: F401  (where the roster's callers have found it)

log = logging.getLogger(__name__)

MemberStatus = Literal["working", "idle", "waiting_plan", "shutdown", "failed"]
MAX_ROLE_CHARS = 200


class Member(BaseModel):
    """One teammate (or the lead) as recorded in config.json."""

    model_config = ConfigDict(defer_build=True, extra="ignore")

    name: str
    role: str
    model: str | None = None
    status: MemberStatus = "idle"
    current_task: int | None = None
    idle_reason: str = ""
    updated_at: str
    require_plan: bool = False
    tokens: int = 0
    spend: list[dict[str, Any]] = []  # pricing.Ledger rows: usage per model and tier
    pid: int | None = None  # the process running this teammate (None when it is not running)
    host: str | None = None  # that process's host name

    @field_validator("name")
    @classmethod
    def _slug(cls, value: str) -> str:
        if not NAME_RE.fullmatch(value):
            raise ValueError(f"{value!r} is not a valid member name")
        return value


class TeamConfig(BaseModel):
    """The whole of config.json."""

    model_config = ConfigDict(defer_build=True, extra="ignore")

    team: str
    updated_at: str | None = None
    members: list[Member] = []

    @field_validator("members")
    @classmethod
    def _unique(cls, members: list[Member]) -> list[Member]:
        seen: set[str] = set()
        for m in members:
            if m.name in seen:
                raise ValueError(f"member {m.name!r} is listed twice")
            seen.add(m.name)
        return members


@dataclass
class RosterSnapshot:
    """What a reader sees: the team, its members in join order, and a problem if the file
    could not be read (then `members` is empty)."""

    team: str
    members: list[Member]
    problem: str | None = None


def thread_name(member: str) -> str:
    """The name of the thread that runs teammate `member` in its process."""
    return f"teammate-{member}"


def _one_line(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    return f"{where}: {first['msg']}" if where else first["msg"]


class Roster:
    """The members of the team whose state lives in `team_dir`."""

    def __init__(self, team_dir: Path, team_name: str = "default") -> None:
        self.team_dir = Path(team_dir)
        self.team_name = check_name(team_name, "team name")
        self.path = self.team_dir / "config.json"
        self._lock = StateLock(self.team_dir / ".config.lock")

    # ---- reading ---------------------------------------------------------------------

    def stamp(self) -> tuple[int, int, int] | None:
        """Cheap: changes on every roster write by any process (None: no roster yet)."""
        try:
            st = os.stat(self.path, follow_symlinks=False)
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    def load(self) -> TeamConfig | None:
        """The parsed config.json, None if absent; CorruptFile (naming it) if unreadable."""
        try:
            data = read_state(self.path)
            if data is None:
                return None
            raw = data.decode("utf-8")
        except UnusableFile as exc:  # a link, FIFO, directory, or over its cap: never read
            raise CorruptFile(self.path, f"unusable ({exc.detail})") from exc
        except (OSError, StorageError, UnicodeDecodeError) as exc:
            raise CorruptFile(self.path, f"cannot read ({exc})") from exc
        try:
            return TeamConfig.model_validate(parse_json(raw))
        except ValidationError as exc:
            raise CorruptFile(self.path, f"not a team config ({_one_line(exc)})") from None
        except ValueError as exc:
            raise CorruptFile(self.path, f"not valid JSON ({exc})") from None

    def snapshot(self) -> RosterSnapshot:
        """Never raises for a bad file: the problem is reported in the snapshot instead."""
        try:
            config = self.load()
        except CorruptFile as exc:
            return RosterSnapshot(
                self.team_name,
                [],
                f"{exc}; it will be set aside on the next roster change",
            )
        if config is None:
            return RosterSnapshot(self.team_name, [])
        return RosterSnapshot(config.team, list(config.members))

    def members(self) -> list[Member]:
        return self.snapshot().members

    def get(self, name: str) -> Member | None:
        check_name(name, "teammate name")
        for m in self.members():
            if m.name == name:
                return m
        return None

    def gone_reason(self, member: Member) -> str | None:
        """Why a member the roster shows running is not ("process 4242 ended"); None when it
        runs, stopped as recorded, or cannot be told (another host: team/liveness.py)."""
        from .liveness import member_gone

        return member_gone(member)

    def is_alive(self, member: Member) -> bool:
        """Whether a live process (this one included) runs `member` right now.

        True when the member records a pid on this host and that process exists; for this
        process's own pid only while its thread for the member runs here (a record left by a
        crashed session whose pid was reused is stale). Another host cannot be checked: False.
        """
        if member.pid is None or member.host != this_host():
            return False
        if member.pid == os.getpid():
            want = thread_name(member.name)
            return any(t.name == want and t.is_alive() for t in threading.enumerate())
        try:
            os.kill(member.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True  # it exists, owned by another user
        except OSError:
            return False
        return True

    # ---- writing ---------------------------------------------------------------------

    def add(
        self, name: str, role: str, model: str | None = None, require_plan: bool = False
    ) -> Member:
        """Add `name`, or re-register it: status idle, no task, no idle reason."""
        return self._add(name, role, model, require_plan, running_here=False)

    def add_running(
        self, name: str, role: str, model: str | None = None, require_plan: bool = False
    ) -> Member:
        """add() for a teammate this process is about to run, recording its pid and host.

        Refused (nothing written) while another live process runs `name`: checked and
        written under the roster lock, so two sessions cannot both start it.
        """
        return self._add(name, role, model, require_plan, running_here=True)

    def _add(
        self, name: str, role: str, model: str | None, require_plan: bool, running_here: bool
    ) -> Member:
        check_name(name, "teammate name")
        if not isinstance(role, str) or not role.strip():
            raise UserError("a teammate needs a role (e.g. 'tester')")
        role = " ".join(role.split())
        if len(role) > MAX_ROLE_CHARS:
            raise UserError(f"role is too long ({len(role)} chars, at most {MAX_ROLE_CHARS})")
        with self._lock.held():
            members = self._members_for_write()
            old = next((m for m in members if m.name == name), None)
            if running_here and old is not None and old.pid != os.getpid() and self.is_alive(old):
                raise Refused(f"{name} is already running in process {old.pid} on {old.host}")
            member = Member(
                name=name,
                role=role,
                model=model,
                status="idle",
                current_task=None,
                idle_reason="",
                updated_at=utc_now(),
                require_plan=bool(require_plan),
                tokens=old.tokens if old else 0,
                spend=old.spend if old else [],
                pid=os.getpid() if running_here else None,
                host=this_host() if running_here else None,
            )
            self._write(
                [member if m.name == name else m for m in members] if old else [*members, member]
            )
        return member

    def update(self, name: str, /, **fields: Any) -> Member:
        """Change some fields of `name` (and its updated_at). NotFound / UserError change
        nothing."""
        check_name(name, "teammate name")
        allowed = set(Member.model_fields) - {"name", "updated_at"}
        unknown = sorted(set(fields) - allowed)
        if unknown:
            raise UserError(
                f"unknown member field {unknown[0]!r} (use: {', '.join(sorted(allowed))})"
            )
        with self._lock.held():
            members = self._members_for_write()
            old = next((m for m in members if m.name == name), None)
            if old is None:
                raise NotFound(f"no teammate {name!r} on team {self.team_name}")
            try:
                member = Member.model_validate(
                    {**old.model_dump(), **fields, "updated_at": utc_now()}
                )
            except ValidationError as exc:
                raise UserError(f"cannot update {name}: {_one_line(exc)}") from None
            self._write([member if m.name == name else m for m in members])
        return member

    def _members_for_write(self) -> list[Member]:
        """The current members (under the lock). A corrupt file is set aside, not lost."""
        try:
            config = self.load()
        except CorruptFile as exc:
            moved = set_aside(self.path)
            log.warning("%s; set aside as %s, starting a fresh roster", exc, moved)
            return []
        return list(config.members) if config else []

    def _write(self, members: list[Member]) -> None:
        ensure_dir(self.team_dir)
        data = {
            "team": self.team_name,
            "updated_at": utc_now(),
            "members": [m.model_dump() for m in members],
        }
        atomic_write_json(self.path, data)
