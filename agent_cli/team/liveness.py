"""Is a teammate's process gone? The roster's pid/host, checked the only way that proves it.

`OwnerLiveness` is the board's `owner_gone` check: an owner whose roster entry names a
process on this host that has ended (no such pid, or a zombie) is gone, and its leases expire
at once. Anything else proves nothing: another host, no pid recorded, this very process (its
own threads renew their leases while they live), a pid that exists. config.json is parsed
again only when its (mtime, size, inode) changes, so the check costs one stat per board
operation that finds an owner holding a task.
"""

from __future__ import annotations

import os
import re
import socket
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..errors import CorruptFile, UserError

if TYPE_CHECKING:
    from .roster import Member, Roster


HOST_ENV = "AGENT_CLI_HOST"
HOST_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,252}")


def this_host() -> str:
    """The host name a roster entry and a session record (pid, host) are written with:
    $AGENT_CLI_HOST when set (containers whose host names are not unique, or one machine
    standing in for two), else the system's host name. A value that is not a host name is a
    UserError naming the variable."""
    given = os.environ.get(HOST_ENV, "").strip()
    if not given:
        return socket.gethostname()
    if not HOST_RE.fullmatch(given):
        raise UserError(f"{HOST_ENV}={given[:80]!r}: not a host name (letters, digits, "
                        "'.', '_' and '-')")
    return given


def pid_ended(pid: int) -> bool:
    """True only when `pid` provably no longer runs (absent, or a zombie awaiting its
    parent). A pid no process can have (0, negative, huge) proves nothing."""
    if not isinstance(pid, int) or not 0 < pid < 1 << 31:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (OSError, OverflowError):
        return False  # exists (another user's) or cannot tell
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            state = fh.read(512).rsplit(b")", 1)[-1].split()[:1]
    except OSError:
        return False
    return state == [b"Z"]


def gone_reason(member: Member, host: str) -> str | None:
    """'process 4242 ended' when `member`'s recorded process on this host has ended."""
    if member.pid is None or member.host != host or member.pid == os.getpid():
        return None
    return f"process {member.pid} ended" if pid_ended(member.pid) else None


def member_gone(member: Member) -> str | None:
    """For `agent-cli team` and /team: why a member the roster shows running is not."""
    if member.status in ("shutdown", "failed"):
        return None
    return gone_reason(member, this_host())


class OwnerLiveness:
    """Callable: owners -> {owner: why its process is gone} for the provably gone ones."""

    def __init__(self, roster: Roster) -> None:  # any roster with stamp() and load()
        self._roster = roster
        self._host = this_host()
        self._lock = threading.Lock()
        self._sig: tuple[int, int, int] | None = None
        self._members: dict[str, Member] = {}

    def __call__(self, owners: Iterable[str]) -> dict[str, str]:
        members = self._current()
        found = {}
        for owner in owners:
            member = members.get(owner)
            why = gone_reason(member, self._host) if member is not None else None
            if why:
                found[owner] = why
        return found

    def gone(self, owner: str) -> str | None:
        return self([owner]).get(owner)

    def _current(self) -> dict[str, Member]:
        sig = self._roster.stamp()
        if sig is None:
            return {}
        with self._lock:
            if sig != self._sig:
                try:
                    config = self._roster.load()
                except CorruptFile:
                    config = None  # unreadable: nobody is proven gone
                self._members = {m.name: m for m in config.members} if config else {}
                self._sig = sig
            return self._members
