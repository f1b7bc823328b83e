"""A scripted model: a queue of canned responses per agent, for tests and offline e2e runs.

ScriptedModel(script) routes each request by `request.agent`: the agent's own queue if the
script has that key, else the "*" queue. Each entry is consumed once and is one of:

- a `Reply(text, tool_calls=[Call(name, input)], stop_reason=None, usage=None, thinking="")`
  (models/reply.py; thinking is streamed only to a request with extended thinking on),
  streamed by `reply.play`: TextDelta(s), one ToolCall per call, ResponseDone.
  Tool-use ids are "toolu_<n>", unique per model instance, unless a Call names its own id.
- an exception instance: raised when the entry is reached (e.g. errors.Overloaded("busy")).
- a callable `(ModelRequest) -> Reply | str`: called with the request (a str means text only).

A `responder` (same signature) answers every request no queue does: the offline demo is a
ScriptedModel with a responder, typing `Pacing`, its own tool ids and no request log.
Every request is recorded (deep copy) in `.requests` unless `record=False`; with nothing to
answer, errors.ScriptExhausted names the agent; `assert_used_up()` fails listing what is
left. Thread-safe: teammates call one instance from many threads.

File format (`--model script:PATH.json`, loaded by `ScriptedModel.from_file`):

    {
      "lead":  [{"text": "Planning.", "tool_calls": [
                   {"name": "create_task", "input": {"subject": "write tests"}}]},
                {"error": "overloaded", "message": "try later"},
                {"text": "All done."}],
      "alice": [{"text": "On it.", "stop_reason": "end_turn",
                 "usage": {"input_tokens": 120, "output_tokens": 8}}],
      "*":     [{"text": "ok"}]
    }

Keys are agent names (or "*"); each value is a list of entries. An entry has "text",
"tool_calls" (each {"name", "input", optional "id"}), optional "stop_reason", "usage" and
"thinking", or
else is {"error": KIND, "message": optional} with KIND one of rate_limited, overloaded,
auth, bad_request, connection. Unknown keys are refused so typos fail loudly.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from .. import errors
from .base import ModelEvent, ModelRequest, ToolResultBlock, Usage, check_cancel
from .reply import Call, Pacing, Reply, play

__all__ = ["Call", "Reply", "ScriptedModel", "parse_script"]  # Call and Reply live in reply.py

ANY_AGENT = "*"

ERROR_KINDS: dict[str, type[errors.ModelError]] = {
    "rate_limited": errors.RateLimited,
    "overloaded": errors.Overloaded,
    "auth": errors.AuthFailed,
    "bad_request": errors.BadRequest,
    "connection": errors.ConnectionFailed,
}


Responder = Callable[[ModelRequest], "Reply | str"]
Entry = Reply | BaseException | Responder


class ScriptedModel:
    """A Model that answers from a script instead of a network. See the module docstring."""

    def __init__(
        self,
        script: dict[str, list[Entry]] | None = None,
        name: str = "scripted",
        *,
        responder: Responder | None = None,
        pacing: Pacing | None = None,
        tool_ids: Callable[[str], str] | None = None,
        record: bool = True,
    ) -> None:
        self.name = name
        self._queues: dict[str, deque[Entry]] = {
            agent: deque(entries) for agent, entries in (script or {}).items()
        }
        self._responder = responder
        self._pacing = pacing or Pacing()
        self._tool_ids = tool_ids or self._new_id
        self._record = record
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._requests: list[ModelRequest] = []

    # -- script management -------------------------------------------------------------

    def add(self, agent: str, *entries: Entry) -> None:
        """Append entries to an agent's queue (creating it)."""
        with self._lock:
            self._queues.setdefault(agent, deque()).extend(entries)

    @property
    def requests(self) -> list[ModelRequest]:
        """Every request received so far, in arrival order (copies)."""
        with self._lock:
            return list(self._requests)

    def requests_for(self, agent: str) -> list[ModelRequest]:
        return [r for r in self.requests if r.agent == agent]

    def remaining(self) -> dict[str, int]:
        """How many entries are left per queue (only non-empty queues)."""
        with self._lock:
            return {agent: len(q) for agent, q in self._queues.items() if q}

    def assert_used_up(self) -> None:
        """Raise AssertionError if any queue still holds entries."""
        left = self.remaining()
        if left:
            detail = ", ".join(f"{agent!r}: {n}" for agent, n in sorted(left.items()))
            raise AssertionError(f"scripted model has unused entries: {detail}")

    # -- the Model interface -----------------------------------------------------------

    def stream(
        self, request: ModelRequest, cancel: threading.Event | None = None
    ) -> Iterator[ModelEvent]:
        check_cancel(cancel)
        entry = self._next_entry(request)
        if isinstance(entry, BaseException):
            raise entry
        reply = entry(request) if callable(entry) else entry
        if isinstance(reply, str):
            reply = Reply(text=reply)
        if not isinstance(reply, Reply):
            raise TypeError(f"scripted entry for {request.agent!r} returned {type(reply)!r}")
        yield from play(reply, request, self._tool_ids, self._pacing, cancel)

    def _next_entry(self, request: ModelRequest) -> Entry:
        with self._lock:
            if self._record:
                self._requests.append(request.model_copy(deep=True))
            key = request.agent if request.agent in self._queues else ANY_AGENT
            queue = self._queues.get(key)
            if queue:
                return queue.popleft()
            if self._responder is not None:
                return self._responder
            served = sum(1 for r in self._requests if r.agent == request.agent) - 1
        last = _last_user_text(request)
        raise errors.ScriptExhausted(
            f"scripted model: no response left for agent {request.agent!r} "
            f"(queue {key!r}; it already answered {served} of its requests); "
            f"last user input: {last!r}"
        )

    def _new_id(self, tag: str = "") -> str:
        with self._lock:
            return f"toolu_{tag}{next(self._ids)}"

    # -- loading -----------------------------------------------------------------------

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedModel:
        """Load a script in the JSON format documented above; UserError names the problem."""
        p = Path(path)
        try:
            raw = json.loads(p.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise errors.UserError(f"script file not found: {p}") from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise errors.UserError(f"{p}: not a readable JSON script ({exc})") from None
        return cls(parse_script(raw, source=str(p)), name=f"script:{p}")


def parse_script(raw: Any, source: str = "script") -> dict[str, list[Entry]]:
    """Turn the JSON form of a script into entries; raise UserError naming the bad place."""
    if not isinstance(raw, dict):
        raise errors.UserError(f"{source}: expected an object mapping agent names to lists")
    script: dict[str, list[Entry]] = {}
    for agent, entries in raw.items():
        if not isinstance(entries, list):
            raise errors.UserError(f"{source}: {agent!r} must map to a list of entries")
        script[agent] = [_parse_entry(e, f"{source}: {agent}[{i}]") for i, e in enumerate(entries)]
    return script


def _parse_entry(raw: Any, where: str) -> Entry:
    if not isinstance(raw, dict):
        raise errors.UserError(f"{where}: an entry must be an object")
    if "error" in raw:
        _only_keys(raw, {"error", "message"}, where)
        kind = raw["error"]
        if kind not in ERROR_KINDS:
            raise errors.UserError(
                f"{where}: unknown error {kind!r} (use one of {', '.join(ERROR_KINDS)})"
            )
        return ERROR_KINDS[kind](str(raw.get("message") or f"scripted {kind} error"))
    _only_keys(raw, {"text", "tool_calls", "stop_reason", "usage", "thinking"}, where)
    text = raw.get("text", "")
    calls = raw.get("tool_calls", [])
    thinking = raw.get("thinking", "")
    if not isinstance(text, str) or not isinstance(calls, list) or not isinstance(thinking, str):
        raise errors.UserError(f"{where}: 'text' and 'thinking' must be strings and "
                               "'tool_calls' a list")
    try:
        usage = Usage(**raw["usage"]) if raw.get("usage") is not None else None
    except (TypeError, ValueError) as exc:
        raise errors.UserError(f"{where}: bad usage ({exc})") from None
    return Reply(
        text=text,
        tool_calls=[_parse_call(c, f"{where}.tool_calls[{i}]") for i, c in enumerate(calls)],
        stop_reason=raw.get("stop_reason"),
        usage=usage,
        thinking=thinking,
    )


def _parse_call(raw: Any, where: str) -> Call:
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
        raise errors.UserError(f"{where}: a tool call needs a string 'name'")
    _only_keys(raw, {"name", "input", "id"}, where)
    inp = raw.get("input", {})
    if not isinstance(inp, dict):
        raise errors.UserError(f"{where}: 'input' must be an object")
    return Call(name=raw["name"], input=inp, id=raw.get("id"))


def _only_keys(raw: dict, allowed: set[str], where: str) -> None:
    extra = sorted(set(raw) - allowed)
    if extra:
        raise errors.UserError(f"{where}: unknown key(s) {', '.join(extra)}")


def _last_user_text(request: ModelRequest) -> str:
    for msg in reversed(request.messages):
        if msg.role == "user":
            text = msg.text() or " ".join(
                b.text() for b in msg.content if isinstance(b, ToolResultBlock)
            )
            return text[:80]
    return ""
