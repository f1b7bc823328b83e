"""`--output-format stream-json`: one JSON object per line, written and flushed as it happens.

First `{"type": "system", "subtype": "init", "session_id", "model", "tools", "cwd", ...}`;
then, for the lead and every teammate (each line has `agent` and `session_id`): assistant
text and tool calls as `{"type": "assistant", "message": {"content": [...]}}`, tool results as
`{"type": "user", "message": {"content": [{"type": "tool_result", ...}]}}`, and `task`,
`message`, `status`, `approval`, `notice`, `error`, `turn` and `compacted` lines; last
`{"type": "result", "subtype", "is_error", ...}` carrying every field of `--output-format
json`. Events that arrive before the init line is written wait for it. Writes take one lock, so
lines from different threads never interleave.
"""

from __future__ import annotations

import threading
from typing import Any, TextIO

from .. import safetext
from ..events import (
    AgentError,
    Compacted,
    Event,
    MessageEvent,
    Notice,
    StatusEvent,
    TaskEvent,
    TextDone,
    ThinkingDone,
    ToolFinished,
    ToolStarted,
    TurnFinished,
)


def event_record(event: Event) -> dict[str, Any] | None:
    """The stream-json object for one event (None: not shown, e.g. text deltas, usage)."""
    if isinstance(event, TextDone):
        if not event.text.strip():
            return None
        return {"type": "assistant", "message": {"role": "assistant",
                                                 "content": [{"type": "text", "text": event.text}]}}
    if isinstance(event, ThinkingDone):
        content = [{"type": "thinking", "thinking": event.text}] if event.text else []
        content += [{"type": "redacted_thinking"}] * event.redacted
        return {"type": "assistant", "message": {"role": "assistant", "content": content}}
    if isinstance(event, ToolStarted):
        block = {"type": "tool_use", "id": event.tool_use_id, "name": event.tool,
                 "input": event.input if event.input is not None else {}}
        return {"type": "assistant", "message": {"role": "assistant", "content": [block]}}
    if isinstance(event, ToolFinished):
        block = {"type": "tool_result", "tool_use_id": event.tool_use_id,
                 "content": event.content or event.outcome, "is_error": not event.ok}
        return {"type": "user", "message": {"role": "user", "content": [block]}}
    if isinstance(event, TaskEvent):
        return {"type": "task", "action": event.action, "task_id": event.task_id,
                "subject": event.subject, "detail": event.detail}
    if isinstance(event, MessageEvent):
        return {"type": "message", "to": event.to, "msg_type": event.msg_type,
                "preview": event.preview}
    if isinstance(event, StatusEvent):
        return {"type": "status", "status": event.status, "task_id": event.task_id,
                "reason": event.reason}
    if isinstance(event, Notice):
        return {"type": "notice", "level": event.level, "text": event.text}
    if isinstance(event, AgentError):
        return {"type": "error", "error_kind": event.error_kind, "message": event.message}
    if isinstance(event, TurnFinished):
        return {"type": "turn", "stop_reason": event.stop_reason, "rounds": event.rounds}
    if isinstance(event, Compacted):
        return {"type": "compacted", "before_tokens": event.before_tokens,
                "after_tokens": event.after_tokens}
    return None


class StreamJson:
    """Subscribes to the runtime's events; `init` opens the stream, `result` closes it."""

    def __init__(self, out: TextIO, runtime: Any) -> None:
        self.out = out
        self.session_id = runtime.current_session_id()
        self._lock = threading.Lock()
        self._started = False
        self._waiting: list[dict[str, Any]] = []
        self._unsubscribe = runtime.events.subscribe(self.on_event)

    def _write(self, record: dict[str, Any]) -> None:
        self.out.write(safetext.dumps(record, default=str) + "\n")
        self.out.flush()

    def emit(self, record: dict[str, Any], agent: str | None = None) -> None:
        """Write one line now (or once init is written), stamped with agent and session."""
        full = {**record, **({"agent": agent} if agent is not None else {}),
                "session_id": self.session_id}
        with self._lock:
            if not self._started:
                self._waiting.append(full)
                return
            try:
                self._write(full)
            except (BrokenPipeError, OSError, ValueError):
                pass  # the reader went away; the run still finishes cleanly

    def on_event(self, event: Event) -> None:
        record = event_record(event)
        if record is not None:
            self.emit(record, event.agent)

    def init(self, model: str, tools: list[str], cwd: str, extra: dict[str, Any]) -> None:
        with self._lock:
            self._write({"type": "system", "subtype": "init", "session_id": self.session_id,
                         "model": model, "tools": tools, "cwd": cwd, **extra})
            for record in self._waiting:
                self._write(record)
            self._waiting = []
            self._started = True

    def open(self, runtime: Any, lead: Any) -> None:
        """The init line for this run's lead: model, tools, workdir, mode, memory files."""
        self.init(lead.model.name, lead.tools.names(), str(runtime.workdir),
                  {"permissionMode": runtime.policy.mode,
                   "memory": [str(f.path) for f in runtime.memory.files]})

    def approval(self, item: dict[str, Any]) -> None:
        """A request the headless run denied (nobody could approve it)."""
        self.emit({"type": "approval", "decision": "deny", "source": "headless",
                   "tool": item.get("tool"), "target": item.get("target"),
                   "rule": item.get("rule"), "purpose": item.get("purpose")},
                  item.get("agent"))

    def result(self, report: dict[str, Any], fields: dict[str, Any]) -> None:
        """The last line: `fields` (subtype, is_error, ...) and the whole JSON report."""
        self._unsubscribe()
        if not self._started:  # the run failed before it could say what it runs
            self.init("", [], "", {})
        self.emit({"type": "result", **fields, **report})
