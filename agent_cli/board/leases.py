"""Claim leases: a claim is valid over [claimed_at, lease_expires_at), and never forever.

`LeaseIndex` (kept by the cache, in step with its parsed tasks) answers "which leases have
run out?" without looking at a single file: a min-heap of expiry instants. `TokenLedger` is
`.tasks/tokens`, every claim token ever handed out and what became of it, so no token is
reused for the life of the board and an old token's completion is answered "lease expired".
`Leases` is the board's policy: the clock, the token generator, the default lease and the
`owner_gone` check (same host, owner process provably ended) that expires a lease at once.
Times are whole milliseconds since the epoch; on disk UTC ISO 8601 with a trailing Z.
"""

from __future__ import annotations

import heapq
import os
import re
import stat
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import Refused, StorageError, UserError
from ..fsutil import append_line

if TYPE_CHECKING:  # the task model (pydantic): not for reading --lease or $AGENT_CLI_LEASE_S
    from .models import Task

DEFAULT_LEASE_S = 600.0
LEASE_ENV = "AGENT_CLI_LEASE_S"
TOKEN_DRAWS = 8  # fresh draws before a claim is refused: a generator that only repeats
TOKEN_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")
MAX_LEDGER_BYTES = 256 << 20  # ~5 million claims; a bigger file is not ours
# owners -> {owner: why its process is gone} for those provably gone (one call per operation)
OwnerGone = Callable[[Iterable[str]], "dict[str, str]"]


class LeaseExpired(Refused):
    """complete/renew with a token whose lease ran out (the task went back to pending)."""


def lease_seconds(raw: object, where: str = "--lease") -> float:
    """A lease length in seconds (> 0, finite); UserError naming `where` otherwise."""
    try:
        value = float(raw)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise UserError(f"{where}: {raw!r} is not a number of seconds") from None
    if not value > 0 or value == float("inf"):
        raise UserError(f"{where}: {raw!r}: use a number of seconds above 0")
    return value


def lease_from_env(env: Mapping[str, str]) -> float | None:
    raw = env.get(LEASE_ENV, "").strip()
    return lease_seconds(raw, LEASE_ENV) if raw else None


def iso_ms(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def parse_ms(text: str) -> int:
    return round(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


def expiry_ms(task: Task) -> int | None:
    """When `task`'s claim stops being valid (None when it is not claimed). A claim written
    before leases existed gets the default lease from its claimed_at."""
    if task.status != "in_progress":
        return None
    try:
        if task.lease_expires_at:
            return parse_ms(task.lease_expires_at)
        if task.claimed_at:
            return parse_ms(task.claimed_at) + round(DEFAULT_LEASE_S * 1000)
    except ValueError:
        return 0  # an unreadable time proves nothing is valid: expire it
    return 0


@dataclass(frozen=True)
class Expiry:
    """One lease taken back: whose, which token, when it ran out, and why now."""

    task_id: int
    subject: str
    owner: str
    token: str
    lease_expires_at: str
    reason: str  # "lease ran out" or "process 4242 ended"

    def line(self) -> str:
        return (
            f"#{self.task_id} {self.subject}: {self.owner}'s lease expired ({self.reason}); "
            "pending again"
        )


class LeaseIndex:
    """Expiry instants of the in_progress tasks: a heap with lazy deletion."""

    def __init__(self) -> None:
        self._expiry: dict[int, int] = {}
        self._heap: list[tuple[int, int]] = []
        self._tokens: dict[str, int] = {}  # the active claim tokens -> their task

    def update(self, task: Task) -> None:
        when = expiry_ms(task)
        if when is None:
            self.discard(task.id)
            return
        self._tokens[task.claim_token or ""] = task.id
        if self._expiry.get(task.id) == when:
            return
        self._expiry[task.id] = when
        heapq.heappush(self._heap, (when, task.id))
        if len(self._heap) > 2 * len(self._expiry) + 64:
            self._heap = [(w, i) for i, w in self._expiry.items()]
            heapq.heapify(self._heap)

    def discard(self, task_id: int) -> None:
        self._expiry.pop(task_id, None)

    def active_token(self, token: str) -> bool:
        """Whether an in_progress task holds `token` now (stale entries are checked)."""
        tid = self._tokens.get(token)
        if tid is not None and tid not in self._expiry:
            del self._tokens[token]
            return False
        return tid is not None

    def due(self, now_ms: int) -> list[int]:
        """Ids whose lease has run out at `now_ms` (the exact instant counts), soonest first."""
        heap = self._heap
        while heap and self._expiry.get(heap[0][1]) != heap[0][0]:
            heapq.heappop(heap)
        if not heap or heap[0][0] > now_ms:
            return []
        found = []
        for when, tid in sorted(heap):
            if when > now_ms:
                break
            if self._expiry.get(tid) == when:
                found.append(tid)
        return found

    def __len__(self) -> int:
        return len(self._expiry)


class TokenLedger:
    """`.tasks/tokens`: one line per token event, `c TOKEN ID` (claimed), `x` (lease expired),
    `d` (completed), `r` (released). Read incrementally under the board lock."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fate: dict[str, tuple[int, str]] = {}  # token -> (task id, last event)
        self._offset = 0
        self._ino: int | None = None

    def refresh(self) -> None:
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except FileNotFoundError:
            self._fate, self._offset, self._ino = {}, 0, None
            return
        except OSError:
            return  # a symlink or unreadable: record() refuses to write through it
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_LEDGER_BYTES:
                return
            if st.st_ino != self._ino or st.st_size < self._offset:
                self._fate, self._offset, self._ino = {}, 0, st.st_ino
            if st.st_size == self._offset:
                return
            data = os.pread(fd, st.st_size - self._offset, self._offset)
        finally:
            os.close(fd)
        end = data.rfind(b"\n") + 1  # a torn last line waits for its newline
        for line in data[:end].decode("utf-8", "replace").splitlines():
            self._apply(line)
        self._offset += end

    def _apply(self, line: str) -> None:
        parts = line.split()
        if len(parts) != 3 or parts[0] not in "cxdr" or not parts[2].isdigit():
            return
        self._fate[parts[1]] = (int(parts[2]), parts[0])

    def known(self, token: str) -> bool:
        return token in self._fate

    def fate(self, token: str) -> tuple[int, str] | None:
        return self._fate.get(token)

    def record(self, kind: str, token: str, task_id: int) -> None:
        self._check_file()
        # the next refresh reads this line again: applying it twice changes nothing
        append_line(self.path, f"{kind} {token} {task_id}", fsync=False)
        self._fate[token] = (task_id, kind)

    def _check_file(self) -> None:
        """StorageError naming the ledger when it is anything but a regular file of ours."""
        try:
            st = os.lstat(self.path)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise StorageError(f"cannot read {self.path}: {exc.strerror or exc}") from exc
        why = None
        if stat.S_ISLNK(st.st_mode):
            why = "is a symbolic link, not the token ledger"
        elif not stat.S_ISREG(st.st_mode):
            why = "is not a regular file"
        elif st.st_size > MAX_LEDGER_BYTES:
            why = f"is larger than {MAX_LEDGER_BYTES >> 20} MB"
        if why:
            raise StorageError(f"{self.path} {why}: claims refused until it is moved away")


class Leases:
    """The board's lease policy (see the module docstring). Thread-safety: the board lock."""

    def __init__(
        self,
        tasks_dir: Path,
        lease_s: float | None = None,
        clock: Callable[[], float] | None = None,
        token_factory: Callable[[], str] | None = None,
        owner_gone: OwnerGone | None = None,
    ) -> None:
        self.lease_s = lease_seconds(lease_s) if lease_s is not None else DEFAULT_LEASE_S
        self._clock = clock or time.time
        self._new_token = token_factory or (lambda: uuid.uuid4().hex)
        self.owner_gone = owner_gone
        self.ledger = TokenLedger(Path(tasks_dir) / "tokens")

    def now_ms(self) -> int:
        return round(self._clock() * 1000)

    def claim_fields(self, lease_s: float | None) -> tuple[str, str]:
        """(claimed_at, lease_expires_at) for a claim made now."""
        now = self.now_ms()
        length = lease_seconds(lease_s) if lease_s is not None else self.lease_s
        return iso_ms(now), iso_ms(now + max(1, round(length * 1000)))

    def draw_token(self, index: LeaseIndex, task_id: int) -> str:
        """A token never handed out on this board (recorded before the claim is written);
        Refused when the generator gives only used or malformed ones."""
        self.ledger.refresh()
        for _ in range(TOKEN_DRAWS):
            token = self._new_token()
            if not isinstance(token, str) or not TOKEN_RE.fullmatch(token):
                continue
            if self.ledger.known(token) or index.active_token(token):
                continue
            self.ledger.record("c", token, task_id)
            return token
        raise Refused(
            f"task {task_id} not claimed: the token generator gave only used claim tokens"
        )

    def note(self, kind: str, token: str | None, task_id: int) -> None:
        """Record a token's end (d completed, r released, x expired); never fails a write."""
        if not token:
            return
        try:
            self.ledger.record(kind, token, task_id)
        except StorageError:
            pass  # the task write that follows says what happened; the token is not reused

    def refusal(self, task: Task, owner: str, token: object) -> Refused | None:
        """Why `token` cannot complete `task` when it is not the current claim's token."""
        if not isinstance(token, str) or token == task.claim_token:
            return None
        self.ledger.refresh()
        fate = self.ledger.fate(token)
        if fate is None or fate[0] != task.id or task.status == "completed":
            return None
        if fate[1] == "x":
            return LeaseExpired(
                f"lease expired: {owner}'s claim on task {task.id} ran out and the task "
                "went back to pending; claim it again"
            )
        return None  # other ended claims: the board's own answer (completed, wrong token)

    def due(
        self,
        index: LeaseIndex,
        tasks: Mapping[int, Task],
        holders: Iterable[str],
        held_by: Callable[[str], list[Task]],
    ) -> list[Expiry]:
        """Expiries to apply now: leases run out, and owners whose process is gone."""
        found: dict[int, Expiry] = {}
        for tid in index.due(self.now_ms()):
            task = tasks.get(tid)
            if task is not None and task.status == "in_progress":
                found[tid] = _expiry(task, "lease ran out")
        gone = self.owner_gone(holders) if self.owner_gone is not None else {}
        for owner, why in gone.items():
            for task in held_by(owner):
                found.setdefault(task.id, _expiry(task, why))
        return list(found.values())


def _expiry(task: Task, reason: str) -> Expiry:
    return Expiry(
        task.id,
        task.subject,
        task.owner or "",
        task.claim_token or "",
        task.lease_expires_at or "",
        reason,
    )


def taken_back(
    due: list[Expiry], tasks: Mapping[int, Task], now: str
) -> tuple[list[Task], list[dict]]:
    """The tasks back to pending and their `lease_expired` events (owner, token, when)."""
    from .eventlog import event_record

    back, events = [], []
    for exp in due:
        back.append(
            tasks[exp.task_id].model_copy(
                update={
                    "status": "pending",
                    "owner": None,
                    "claim_token": None,
                    "claimed_at": None,
                    "lease_expires_at": None,
                    "updated_at": now,
                }
            )
        )
        events.append(
            event_record(
                "host",
                "lease_expired",
                exp.task_id,
                owner=exp.owner,
                token=exp.token,
                lease_expires_at=exp.lease_expires_at,
                expired_at=now,
                reason=exp.reason,
            )
        )
    return back, events
