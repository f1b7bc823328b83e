"""What a headless run collects while it runs: the approvals it denies (no human is there to
ask), the failures teammates report to the lead, and warning notices as stderr lines."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, TextIO

from ..events import Event, MessageEvent, Notice
from ..names import LEAD

NO_HUMAN = "no human to approve in headless mode"
FILE_CHANGES = frozenset({"write_file", "edit_file"})  # what acceptEdits allows in the workdir
LONG_RULE = 120  # a suggested rule longer than this is named, not repeated, in the reason


def what_to_do(tool: str, rule: str) -> str:
    """What a headless user can do to let such a call run next time: the rule to pass with
    --allow (or that one must be written), and acceptEdits for a file change."""
    if not rule:
        ways = ["an --allow rule that matches it"]
    elif len(rule) > LONG_RULE:  # too long to repeat in a reason: it is printed in full
        ways = ["--allow and the rule printed for it on stderr (\"denials\" in the JSON)"]
    else:
        ways = [f"--allow '{rule}'"]
    if tool in FILE_CHANGES:
        ways.append("--permission-mode acceptEdits")
    return f"To let it run, rerun with {' or '.join(ways)}."


@dataclass
class HeadlessDenials:
    """Broker UI that denies every request at once and remembers it."""

    broker: Any
    items: list[dict[str, Any]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    on_denied: Any = None  # called with each denial as it happens (stream-json)

    def attach(self) -> None:
        self.broker.attach_ui(self._drain)

    def _drain(self) -> None:
        # Runs on the asking thread once its request is queued; it drains the whole queue,
        # so a request is never left waiting whichever thread gets here first.
        from ..permissions.broker import ApprovalAnswer

        while (req := self.broker.next_request(0)) is not None:
            answer = ApprovalAnswer("deny", feedback=what_to_do(req.tool, req.suggested_rule),
                                    source="headless")
            if self.broker.answer(req.id, answer):
                item = {"agent": req.agent, "tool": req.tool, "target": req.summary,
                        "rule": req.suggested_rule, "purpose": req.purpose,
                        **({"reason": req.reason} if req.reason else {})}
                with self._lock:
                    self.items.append(item)
                if self.on_denied is not None:
                    self.on_denied(item)

    def snapshot(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self.items)


@dataclass
class TeammateFailures:
    """The `error` messages teammates send the lead when they fail, as they are sent."""

    items: list[dict[str, str]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def on_event(self, event: Event) -> None:
        if isinstance(event, MessageEvent) and event.msg_type == "error" and event.to == LEAD:
            with self._lock:
                self.items.append({"agent": event.agent, "message": event.preview})

    def snapshot(self) -> list[dict[str, str]]:
        with self._lock:
            return list(self.items)


class WarningLines:
    """Warning notices (a transcript or state file that cannot be used...) as one stderr
    line each, once: a headless run never hides them."""

    def __init__(self, err: TextIO) -> None:
        self._err = err
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    def on_event(self, event: Event) -> None:
        if not (isinstance(event, Notice) and event.level == "warning"):
            return
        with self._lock:
            if event.text in self._seen:
                return
            self._seen.add(event.text)
        print(f"agent-cli: warning: {event.agent}: {event.text}", file=self._err)
