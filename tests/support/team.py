"""Shared helpers for the team tests: a runtime on a scripted model, event capture that
waits on a condition, a fake human answering approvals, claim-token extraction, and an
injected protocol clock for expiry."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from agent_cli.app import open_runtime
from agent_cli.events import Event
from agent_cli.models.base import ModelRequest
from agent_cli.models.scripted import Call, Reply, ScriptedModel
from agent_cli.permissions.broker import ApprovalAnswer, ApprovalRequest
from agent_cli.runtime import Runtime, RuntimeConfig
from agent_cli.team.protocol import ProtocolStore

WAIT = 30.0  # seconds any test waits for another thread before failing (git on a busy disk)

__all__ = ["Call", "Reply", "WAIT"]


def make_runtime(workdir: Path, model: ScriptedModel, **config) -> Runtime:
    config.setdefault("idle_timeout_s", 0)
    config.setdefault("check_interval_s", 0.02)
    return open_runtime(workdir, RuntimeConfig(model_factory=lambda agent, spec: model, **config))


class Recorder:
    """Collects every event of a runtime; `wait_for(pred)` blocks on a Condition."""

    def __init__(self, runtime: Runtime) -> None:
        self.events: list[Event] = []
        self._cond = threading.Condition()
        runtime.events.subscribe(self._on)

    def _on(self, event: Event) -> None:
        with self._cond:
            self.events.append(event)
            self._cond.notify_all()

    def of(self, kind: str, **fields) -> list[Event]:
        with self._cond:
            return [e for e in self.events if e.kind == kind
                    and all(getattr(e, k, None) == v for k, v in fields.items())]

    def wait_for(self, pred: Callable[[], bool], timeout: float = WAIT, what: str = "") -> None:
        with self._cond:
            if not self._cond.wait_for(pred, timeout):
                raise AssertionError(f"timed out waiting for {what or pred}")

    def wait_event(self, kind: str, timeout: float = WAIT, **fields) -> Event:
        self.wait_for(lambda: self._match(kind, fields), timeout, f"{kind} {fields}")
        return self._match(kind, fields)

    def _match(self, kind: str, fields: dict):
        for e in self.events:
            if e.kind == kind and all(getattr(e, k, None) == v for k, v in fields.items()):
                return e
        return None

    def status(self, agent: str, status: str, timeout: float = WAIT) -> Event:
        return self.wait_event("StatusEvent", timeout, agent=agent, status=status)


class FakeHuman:
    """Answers approval requests from a test thread, as the REPL's UI thread would."""

    def __init__(self, runtime: Runtime, decide: Callable[[ApprovalRequest], str]) -> None:
        self.broker = runtime.broker
        self.decide = decide
        self.asked: list[ApprovalRequest] = []
        self._stop = threading.Event()
        self.broker.attach_ui(lambda: None)
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            req = self.broker.next_request(0.05)
            if req is None:
                continue
            self.asked.append(req)
            self.broker.answer(req.id, ApprovalAnswer(self.decide(req), feedback="not now"))

    def close(self) -> None:
        self._stop.set()
        self._thread.join(WAIT)
        self.broker.detach_ui()


TOKEN_RE = re.compile(r'<auto-claimed-task id="(\d+)" claim_token="([0-9a-f]+)"')


def claimed_in(request: ModelRequest) -> tuple[int, str]:
    """The (task id, claim_token) injected into the request's last user message."""
    for msg in reversed(request.messages):
        if msg.role == "user":
            m = TOKEN_RE.search(msg.text())
            if m:
                return int(m.group(1)), m.group(2)
    raise AssertionError("no <auto-claimed-task> in the last user message")


def complete_claimed(result: str = "done") -> Callable[[ModelRequest], Reply]:
    """A scripted entry that completes whatever task the host just auto-claimed."""

    def entry(request: ModelRequest) -> Reply:
        task_id, token = claimed_in(request)
        return Reply(tool_calls=[Call("complete_task", {
            "task_id": task_id, "claim_token": token, "result": result})])

    return entry


def last_user_text(request: ModelRequest) -> str:
    for msg in reversed(request.messages):
        if msg.role == "user":
            return msg.text()
    return ""


EXPIRY = timedelta(minutes=6)  # past the default 5-minute window


class Clock:
    """The protocol store's injected clock: a test moves `now` instead of waiting."""

    def __init__(self) -> None:
        self.now = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def runtime_with_clock(workdir: Path, model: ScriptedModel) -> tuple[Runtime, Clock]:
    rt = make_runtime(workdir, model)
    clock = Clock()
    rt.protocols = ProtocolStore(rt.team_dir, clock=clock)
    return rt, clock


def paused(reached: threading.Event, go: threading.Event, reply: Reply):
    """A scripted entry that waits (as for a human's approval) until the test lets it go."""

    def entry(request: ModelRequest) -> Reply:
        reached.set()
        assert go.wait(WAIT), "the test never let the model go on"
        return reply

    return entry
