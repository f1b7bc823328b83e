"""Protocol requests (shutdown, plan approval): stored before they are sent, matched strictly.

ProtocolStore owns .team/requests.json (every request, in creation order) and the decision
log .team/protocol.log.jsonl. A request is created pending before its message goes out; a
response resolves it only if the request exists, the kind matches, the responder is the
request's target, the recipient is its sender, and it is still pending and unexpired. Any
mismatch raises Refused with the reason, is logged, and changes nothing (RequestExpired, a
Refused, when the only thing wrong is that the window closed: the caller can ask again). The
same response delivered twice (same response_id) is idempotent; a second, different response
is refused as a duplicate. Every read-check-write happens under .team/.requests.lock.
"""

from __future__ import annotations

import json
import logging
import math
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal, NoReturn, get_args

from pydantic import BaseModel, ConfigDict, ValidationError

from ..errors import CorruptFile, NotFound, Refused, StorageError, UnusableFile, UserError
from ..fsutil import append_line, atomic_write_json, ensure_dir, parse_json, read_state
from ..names import check_name
from . import StateLock, set_aside

log = logging.getLogger(__name__)

ProtocolKind = Literal["shutdown", "plan_approval"]
KINDS: tuple[str, ...] = get_args(ProtocolKind)
RequestStatus = Literal["pending", "approved", "rejected"]
DEFAULT_TTL_S = 300.0
FILE_VERSION = 1


def kind_of(msg_type: str) -> str | None:
    """The protocol kind of a message type ("shutdown_response" -> "shutdown"), else None."""
    for kind in KINDS:
        if msg_type in (f"{kind}_request", f"{kind}_response"):
            return kind
    return None


def format_ts(moment: datetime) -> str:
    """UTC ISO 8601 with milliseconds and a trailing Z (the same shape as fsutil.utc_now)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def parse_ts(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def short_id(request_id: object) -> str:
    text = str(request_id)
    return text[:8] + "..." if len(text) > 8 else text


class RequestExpired(Refused):
    """A response that matched its request, except that the request had expired."""

    def __init__(self, message: str, request: ProtocolRequest) -> None:
        super().__init__(message)
        self.request = request


class ProtocolRequest(BaseModel):
    """One request and, once answered, its resolution."""

    model_config = ConfigDict(defer_build=True, extra="ignore")

    id: str
    kind: ProtocolKind
    sender: str
    target: str
    status: RequestStatus = "pending"
    content: str = ""
    created_at: str
    expires_at: str
    resolution: str | None = None
    resolved_at: str | None = None
    response_id: str | None = None
    task_id: int | None = None  # a plan names the task its sender held when submitting it
    task_claimed_at: str | None = None  # ... and that claim of it (approval is for this claim)

    def expired(self, now: datetime) -> bool:
        """True from expires_at on: the response window is [created_at, expires_at)."""
        return now >= parse_ts(self.expires_at)


class RequestsFile(BaseModel):
    model_config = ConfigDict(defer_build=True)

    version: Literal[1]
    requests: list[ProtocolRequest]


class ProtocolStore:
    """The protocol requests of the team whose state lives in `team_dir`.

    `clock` returns the current aware UTC time; tests inject one to reach expiry without
    waiting.
    """

    def __init__(self, team_dir: Path, clock: Callable[[], datetime] | None = None) -> None:
        self.team_dir = Path(team_dir)
        self.path = self.team_dir / "requests.json"
        self.log_path = self.team_dir / "protocol.log.jsonl"
        self._lock = StateLock(self.team_dir / ".requests.lock")
        self._clock = clock or (lambda: datetime.now(UTC))

    # ---- reading ---------------------------------------------------------------------

    def load(self) -> list[ProtocolRequest]:
        """Every request in creation order; CorruptFile naming requests.json if unreadable.

        Readers fail closed: a plan gate must not open because its state cannot be read.
        """
        try:
            data = read_state(self.path)
            if data is None:
                return []
            raw = data.decode("utf-8")
        except UnusableFile as exc:  # a link, FIFO, directory, or over its cap: never read
            raise CorruptFile(self.path, f"unusable ({exc.detail})") from exc
        except (OSError, StorageError, UnicodeDecodeError) as exc:
            raise CorruptFile(self.path, f"cannot read ({exc})") from exc
        try:
            return RequestsFile.model_validate(parse_json(raw)).requests
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise CorruptFile(self.path, f"not a requests file ({where}: {first['msg']})") from None
        except ValueError as exc:
            raise CorruptFile(self.path, f"not valid JSON ({exc})") from None

    def get(self, request_id: str) -> ProtocolRequest:
        for req in self.load():
            if req.id == request_id:
                return req
        raise NotFound(f"no protocol request {short_id(request_id)}")

    def latest_plan(self, target: str) -> ProtocolRequest | None:
        """The most recently created plan_approval request from teammate `target`."""
        check_name(target, "teammate name")
        plans = [r for r in self.load() if r.kind == "plan_approval" and r.sender == target]
        return plans[-1] if plans else None

    def pending(self, kind: str | None = None, target: str | None = None) -> list[ProtocolRequest]:
        """Unanswered, unexpired requests, optionally of one kind and/or for one target."""
        now = self._clock()
        return [
            r
            for r in self.load()
            if r.status == "pending"
            and not r.expired(now)
            and (kind is None or r.kind == kind)
            and (target is None or r.target == target)
        ]

    def has_expired(self, req: ProtocolRequest) -> bool:
        """True when `req` is still pending but its response window has closed (by this
        store's clock): it can no longer be answered, only asked again."""
        return req.status == "pending" and req.expired(self._clock())

    # ---- writing ---------------------------------------------------------------------

    def create(
        self,
        kind: str,
        sender: str,
        target: str,
        content: str = "",
        ttl_s: float = DEFAULT_TTL_S,
        task: tuple[int, str | None] | None = None,
    ) -> ProtocolRequest:
        """Store a new pending request (call before sending its message) and return it."""
        if kind not in KINDS:
            raise UserError(f"unknown protocol kind {kind!r} (use one of: {', '.join(KINDS)})")
        check_name(sender, "sender name")
        check_name(target, "target name")
        if sender == target:
            raise UserError(f"{sender} cannot send a {kind} request to itself")
        if not isinstance(content, str):
            raise UserError("request content must be text")
        if (
            isinstance(ttl_s, bool)
            or not isinstance(ttl_s, int | float)
            or not (math.isfinite(ttl_s) and ttl_s > 0)
        ):
            raise UserError(f"invalid ttl {ttl_s!r}: use a positive number of seconds")
        with self._lock.held():
            requests = self._requests_for_write()
            now = self._clock()
            req = ProtocolRequest(
                id=uuid.uuid4().hex,
                kind=kind,
                sender=sender,
                target=target,
                content=content,
                created_at=format_ts(now),
                expires_at=format_ts(now + timedelta(seconds=ttl_s)),
                task_id=task[0] if task else None,
                task_claimed_at=task[1] if task else None,
            )
            self._write([*requests, req])
            self._log("created", req.id, kind=kind, sender=sender, target=target)
        return req

    def resolve(
        self,
        request_id: str,
        kind: str,
        responder: str,
        recipient: str,
        approve: bool,
        resolution: str = "",
        response_id: str | None = None,
    ) -> ProtocolRequest:
        """Answer a pending request. Refused (logged, nothing changed) on any mismatch."""
        check_name(responder, "responder name")
        check_name(recipient, "recipient name")
        if not isinstance(approve, bool):
            raise UserError("approve must be true or false")
        facts = {
            "kind": kind,
            "responder": responder,
            "recipient": recipient,
            "approve": approve,
            "response_id": response_id,
        }
        with self._lock.held():
            try:
                requests = self.load()
            except CorruptFile as exc:
                self._refuse(request_id, f"cannot resolve {short_id(request_id)}: {exc}", facts)
            index = next((i for i, r in enumerate(requests) if r.id == request_id), None)
            if index is None:
                self._refuse(request_id, f"no protocol request {short_id(request_id)}", facts)
            req = requests[index]
            reason = self._mismatch(req, kind, responder, recipient)
            if reason is None and req.status != "pending":
                if response_id is not None and response_id == req.response_id:
                    self._log("redelivered", req.id, **facts)
                    return req
                reason = f"request {short_id(req.id)} is already {req.status} (duplicate response)"
            now = self._clock()
            if reason is None and req.expired(now):
                reason = f"request {short_id(req.id)} expired at {req.expires_at}"
                self._log("rejected", req.id, reason=reason, **facts)
                log.warning("protocol response rejected: %s", reason)
                raise RequestExpired(reason, req)
            if reason is not None:
                self._refuse(req.id, reason, facts)
            done = req.model_copy(
                update={
                    "status": "approved" if approve else "rejected",
                    "resolution": resolution,
                    "resolved_at": format_ts(now),
                    "response_id": response_id,
                }
            )
            requests[index] = done
            self._write(requests)
            self._log("accepted", req.id, **facts)
        return done

    def close_pending(
        self, kind: str, target: str, resolution: str, skip: str | None = None
    ) -> list[ProtocolRequest]:
        """Approve, as `target`, every pending unexpired `kind` request for it (except
        `skip`): used when the target is already down, so an old request cannot reach a
        later incarnation. Returns the requests closed."""
        if kind not in KINDS:
            raise UserError(f"unknown protocol kind {kind!r} (use one of: {', '.join(KINDS)})")
        check_name(target, "target name")
        closed = []
        with self._lock.held():
            requests = self.load()
            now = self._clock()
            for i, req in enumerate(requests):
                if (
                    req.kind != kind
                    or req.target != target
                    or req.status != "pending"
                    or req.id == skip
                    or req.expired(now)
                ):
                    continue
                requests[i] = req.model_copy(
                    update={
                        "status": "approved",
                        "resolution": resolution,
                        "resolved_at": format_ts(now),
                        "response_id": uuid.uuid4().hex,
                    }
                )
                closed.append(requests[i])
            if closed:
                self._write(requests)
                for req in closed:
                    self._log("closed", req.id, kind=kind, target=target, reason=resolution)
        return closed

    # ---- internals -------------------------------------------------------------------

    @staticmethod
    def _mismatch(req: ProtocolRequest, kind: str, responder: str, recipient: str) -> str | None:
        rid = short_id(req.id)
        if kind != req.kind:
            return f"request {rid} is a {req.kind} request, not {kind}"
        if responder != req.target:
            return f"request {rid} is for {req.target}, not {responder}"
        if recipient != req.sender:
            return (
                f"request {rid} came from {req.sender}, so the answer goes to {req.sender}, "
                f"not {recipient}"
            )
        return None

    def _refuse(self, request_id: object, reason: str, facts: dict[str, Any]) -> NoReturn:
        self._log("rejected", request_id, reason=reason, **facts)
        log.warning("protocol response rejected: %s", reason)
        raise Refused(reason)

    def _requests_for_write(self) -> list[ProtocolRequest]:
        try:
            return self.load()
        except CorruptFile as exc:
            moved = set_aside(self.path)
            log.warning("%s; set aside as %s, starting a fresh requests file", exc, moved)
            self._log("set_aside", None, reason=str(exc), moved_to=str(moved))
            return []

    def _write(self, requests: list[ProtocolRequest]) -> None:
        ensure_dir(self.team_dir)
        data = {"version": FILE_VERSION, "requests": [r.model_dump() for r in requests]}
        atomic_write_json(self.path, data)

    def _log(self, outcome: str, request_id: object, **fields: Any) -> None:
        ensure_dir(self.team_dir)
        record = {
            "ts": format_ts(self._clock()),
            "outcome": outcome,
            "request_id": request_id,
            **fields,
        }
        append_line(self.log_path, json.dumps(record, ensure_ascii=False, default=str))
