"""The lead's side of approvals across hosts: remote questions into the local broker.

`ApprovalBridge` runs a thread in the lead's process. While a human is attached to the local
ApprovalBroker it keeps a presence row fresh (the remote askers' `ui_attached`), claims each
waiting request oldest first (`FOR UPDATE SKIP LOCKED`: two leads never take the same one),
and puts it in the local broker as a request that names the asker's host, where the REPL shows
it like any other. The human's answer is written back once, by the bridge's own thread, and
only while the claim is still this lead's; an "always" rule goes to the lead's settings. A
request whose asker gave up (withdrawn, or its heartbeat stale) leaves the local queue with a
notice. A request a remote host sent is data: its agent name and host are checked, its rule
is kept only when it is exactly what this host would suggest for what it shows.
"""

from __future__ import annotations

import re
import socket
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from ..errors import AgentCliError, InvalidName, StorageError
from ..events import Notice
from ..names import check_name
from ..permissions.broker import HEADLESS, ApprovalAnswer, ApprovalBroker, ApprovalRequest
from ..safetext import is_safe, visible
from .approval_queue import ApprovalQueue, Claimed, what
from .approval_wake import Waker
from .db import Database

HEARTBEAT_S = 2.0  # the lead's presence stamp, and how often the queue is looked at
STALE_S = 15.0  # an asker or a lead silent this long is gone
SOON_S = 0.05  # the next claim attempt after a waiting request was found locked
MAX_HELD = 100  # remote questions in the local queue at once (more wait in the database)
CAPS = {"summary": 64_000, "preview": 1_000_000, "purpose": 2_000, "reason": 2_000,
        "suggested_rule": 64_000, "tool": 200}
TOOL_RE = re.compile(r"[A-Za-z0-9_.-]{1,200}")  # shell, write_file, mcp__server__tool, ...
RULE_KINDS = {"shell": "Bash", "write_file": "Write", "edit_file": "Edit"}


@dataclass(eq=False)
class _Held:
    """A remote request in the local queue."""

    key: str
    local: ApprovalRequest
    cancel: threading.Event = field(default_factory=threading.Event)
    answered: bool = False
    gone: str = ""  # why it left the local queue unanswered (said once it has left)


def who(req: ApprovalRequest) -> str:
    return f"{req.agent}@{visible(req.host, one_line=True)}" if req.host else req.agent


def checked_rule(tool: str, summary: str, suggested: str) -> str:
    """The asker's "always" rule if it is exactly what this host suggests for `summary`."""
    from ..permissions.gate import suggest_rule

    if not suggested:
        return ""
    if tool in RULE_KINDS:
        expected = suggest_rule(RULE_KINDS[tool], summary)
    elif tool.startswith("mcp__") or tool == "network":
        expected = summary  # an MCP tool's name; "network access to HOST"
    else:
        expected = ""
    return suggested if suggested == expected else ""


def local_request(row: Claimed) -> ApprovalRequest | str:
    """The row as a local ApprovalRequest, or why it cannot be shown."""
    try:
        agent = check_name(row.agent, "agent name")
    except InvalidName as exc:
        return str(exc)
    host = row.host
    if not (isinstance(host, str) and 0 < len(host) <= 253 and is_safe(host)
            and not any(c.isspace() for c in host)):
        return "its host name is not a plain host name"
    for name, cap in CAPS.items():
        if len(getattr(row, name)) > cap:
            return f"its {name} is longer than {cap} characters"
    if not TOOL_RE.fullmatch(row.tool):
        return "its tool name is not a tool's name"
    return ApprovalRequest(
        agent=agent, tool=row.tool, input=row.input if isinstance(row.input, dict) else {},
        summary=row.summary, preview=row.preview, purpose=row.purpose,
        suggested_rule=checked_rule(row.tool, row.summary, row.suggested_rule),
        reason=row.reason, host=host)


class ApprovalBridge:
    """Brings the team's remote approval requests to this process's human."""

    def __init__(self, db: Database, broker: ApprovalBroker, *, host: str | None = None,
                 policy: Any = None, emit: Any = None, heartbeat_s: float = HEARTBEAT_S,
                 stale_s: float = STALE_S) -> None:
        self.broker = broker
        self.policy = policy  # the lead's PermissionPolicy: "always" rules go to its settings
        self.emit = emit  # the session's EventBus.emit: notices
        self.host = host or socket.gethostname()
        self.lead = uuid.uuid4().hex
        self.heartbeat_s = heartbeat_s
        self.stale_s = stale_s
        self.queue = ApprovalQueue(db)
        self._waker = Waker(db, self.queue.channel)
        self._lock = threading.Lock()
        self._held: dict[str, _Held] = {}
        self._outbox: list[tuple[_Held, ApprovalAnswer]] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._present = False
        self._soon = False  # a waiting request was locked by someone: claim again soon
        self._due = 0.0  # time.monotonic() of the next heartbeat and sweep
        self._down = ""

    def start(self) -> ApprovalBridge:
        self._waker.start()
        self._thread = threading.Thread(target=self._run, daemon=True, name="approval bridge")
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop; what this lead claimed and did not answer goes back to the queue."""
        self._stop.set()
        self._waker.bump()
        if self._thread is not None:
            self._thread.join(30)
        with self._lock:
            held = list(self._held.values())
        for item in held:
            item.cancel.set()
        try:
            self.queue.release(None, self.lead)
            self.queue.absent(self.lead)
        except StorageError:
            pass  # unreachable: our heartbeat goes stale and another lead's sweep frees them
        self._waker.close()

    # ----- the loop ------------------------------------------------------------------------
    def _run(self) -> None:
        seen = -1
        while not self._stop.is_set():
            seen = self._waker.generation()
            try:
                self._tick()
                if self._down:
                    self._down = ""
                    self._notice("approvals from other hosts: the database is back")
            except StorageError as exc:
                if not self._down:
                    self._down = str(exc)
                    self._notice(f"approvals from other hosts wait: {exc} (retrying)",
                                 "warning")
                self._stop.wait(min(self.heartbeat_s, 1.0))
                continue
            self._waker.wait(seen, SOON_S if self._soon else self.heartbeat_s)

    def _tick(self) -> None:
        self._flush()  # first: a claim given back is free before the lead says it left
        attached = self.broker.ui_attached
        now = time.monotonic()
        if now >= self._due or attached != self._present:  # once a heartbeat, not per wake
            if attached:
                self.queue.present(self.lead, self.host)
            elif self._present:
                self.queue.absent(self.lead)
            self._present = attached
            self.queue.sweep(self.stale_s)
            self._due = now + self.heartbeat_s
        self._check_held()
        if attached:
            self._claim()

    def _claim(self) -> None:
        self._soon = False
        while not self._stop.is_set() and len(self._held) < MAX_HELD:
            row = self.queue.claim_next(self.lead, self.stale_s)
            if row is None:  # none free; one locked for a moment (an asker's heartbeat,
                # another lead's claim) was skipped: look again shortly, not in a heartbeat
                self._soon = self.queue.has_waiting(self.stale_s)
                return
            local = local_request(row)
            if isinstance(local, str):
                refusal = ApprovalAnswer("deny", source="refused", feedback=(
                    f"The lead's agent-cli refused to show this request: {local}."))
                self.queue.answer(row.key, self.lead, refusal)
                self._notice(f"a request from {visible(row.agent, one_line=True)}@"
                             f"{visible(row.host, one_line=True)} was refused: {local}",
                             "warning")
                continue
            item = _Held(row.key, local)
            with self._lock:
                self._held[row.key] = item
            threading.Thread(target=self._serve, args=(item,), daemon=True,
                             name=f"approval {row.key[:8]}").start()

    def _serve(self, item: _Held) -> None:
        """On a thread of its own: the local broker blocks until the human answers."""
        answer = self.broker.ask(item.local, item.cancel)
        with self._lock:
            item.answered = not item.cancel.is_set()
            self._outbox.append((item, answer))
        self._waker.bump()

    def _flush(self) -> None:
        """Write what the human answered (or give back what no one will answer)."""
        with self._lock:
            outbox = list(self._outbox)
        for item, answer in outbox:
            self._settle(item, answer)
            with self._lock:
                self._outbox.remove((item, answer))
                self._held.pop(item.key, None)

    def _settle(self, item: _Held, answer: ApprovalAnswer) -> None:
        if not item.answered:
            if item.gone:  # it has left the local queue now: say so
                self._notice(f"{who(item.local)} no longer waits for {what(item.local)} "
                             f"({item.gone})")
            return
        if answer is HEADLESS or answer.source == "closed":
            self.queue.release(item.key, self.lead)  # no human here now: another lead may
            return
        rule = item.local.suggested_rule
        if answer.decision == "allow_always" and rule and self.policy is not None \
                and item.local.tool != "network":
            # The human said "don't ask again": it holds here whatever the asker does now.
            try:
                self.policy.add_rule(rule, "allow", save=answer.save)
            except AgentCliError:
                self.policy.add_rule(rule, "allow")  # settings unwritable: this session
        if not self.queue.answer(item.key, self.lead, answer):
            self._notice(f"{who(item.local)} no longer waits for {what(item.local)}: "
                         "your answer was dropped", "warning")

    def _check_held(self) -> None:
        """Take out of the local queue what is no longer this lead's to answer."""
        with self._lock:
            held = {k: v for k, v in self._held.items() if not v.cancel.is_set()}
        if not held:
            return
        states = self.queue.states(list(held))
        for key, item in held.items():
            state, by = states.get(key, ("gone", None))
            if by == self.lead and state in ("claimed", "answered"):
                continue
            if state == "waiting" and self.queue.reclaim(key, self.lead):
                continue  # freed while our heartbeat was late: still ours, still shown
            with self._lock:
                if item.answered:
                    continue  # the human answered: _settle says it was dropped
                item.gone = "answered by another lead" if state in ("claimed", "answered") \
                    else "it withdrew the request"
                item.cancel.set()

    def _notice(self, text: str, level: str = "info") -> None:
        if self.emit is not None:
            self.emit(Notice("lead", text, level))

