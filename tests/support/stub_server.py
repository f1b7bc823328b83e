"""A wire-level stub of the Anthropic Messages API for tests (stdlib HTTP, 127.0.0.1, port 0).

    with StubServer() as stub:
        stub.push(Reply("hello"), Fault.overloaded(), Reply(tool_calls=[ToolUse("glob", {})]))
        client = anthropic.Anthropic(base_url=stub.url, api_key="test")

POST /v1/messages answers the next queued item: a `Reply` (the offline models' one reply type,
agent_cli.models.reply; `ToolUse` is its Call, whose str input is sent verbatim) streamed as
Server-Sent Events
framed exactly as the API frames them (message_start, content_block_start/delta/stop with
text_delta and input_json_delta, ping, message_delta, message_stop), or a JSON message when
the request does not ask to stream; a `Fault` (an HTTP error status with the API's error body
and optional retry-after headers); or a `MidStream` failure (an `error` event, a connection
reset, or a stall until `release_stalls()`, after some content). With an empty queue the
`default` reply is used, else a 500 "no scripted response" with x-should-retry: false.
POST /v1/messages/count_tokens answers {"input_tokens": N} (`counter(body)` when given, else
the estimate below); its bodies go to `.counted`, not `.requests`. `count_tokens=False`
answers it 404, as a local server does (the attempt is still in `.counted`).
GET /v1/models and /v1/models/{id} answer from `models` (stub_models.entry dicts; default:
STUB_MODEL with a STUB_WINDOW context window); `models_api=False` answers them 404. GET
paths go to `.gets`.

Every request is validated first (stub_rules.validate: the real API's rules plus the
stricter ones our design promises) and answered 400 invalid_request_error when invalid.
Requests need an x-api-key or bearer token (`api_key=` pins the value; else 401).
`.requests` records every request body and `.rejections` the 400 messages, so a test can
assert that our loop never sent a request the API would reject.

Routing per agent: `StubServer(responder=fn)` answers every request the queue does not with
`fn(request_body) -> Reply | Fault | MidStream | None` (None: the `default`); it can tell the
lead from a teammate by the system prompt and read the conversation (for instance the claim
token in an `<auto-claimed-task>` block; see tests/support/e2e_claude.py). A responder
that raises is answered 500 (x-should-retry: false) and its error kept in `.responder_errors`.
`.served` records (request body, usage sent) for every successful reply, so a test can check
what the client counted.

Prompt caching (`StubServer(model_cache=True)`): the request is read as the API reads it --
tools, then system blocks, then each message's content blocks -- and every block carrying
cache_control writes the prefix up to it into the stub's cache. A later request whose
prefix, up to some block at or before its last breakpoint, was written before reads it:
`cache_read_input_tokens` for that part, `cache_creation_input_tokens` for the rest up to its
last breakpoint, `input_tokens` for what follows (tokens estimated as every offline model
does, models.reply.estimate_tokens). A Reply's `usage` replaces the counts it names.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from agent_cli.models.reply import Call, Reply

from . import stub_models
from .stub_models import STUB_WINDOW
from .stub_rules import sign_thinking, validate
from .stub_usage import PromptCache, reply_usage, request_tokens

STUB_MODEL = "claude-stub-1"
__all__ = ["STUB_MODEL", "STUB_WINDOW", "Fault", "MidStream", "Reply", "StubServer", "ToolUse"]
REQUEST_MAX = 32 * 1024 * 1024  # the Messages API's request size cap (413 past it)


ToolUse = Call  # the name these tests use for a tool_use block
REDACTED = "[redacted]"  # a Reply with this thinking sends one redacted_thinking block


@dataclass
class Fault:
    """An HTTP error answer, before any streaming starts."""

    status: int
    error_type: str
    message: str = "stub fault"
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def rate_limited(cls, retry_after: str = "0.01") -> Fault:
        return cls(429, "rate_limit_error", "Rate limited", {"retry-after": retry_after})

    @classmethod
    def overloaded(cls, retry_after: str | None = "0.01") -> Fault:
        return cls(529, "overloaded_error", "Overloaded", _retry_headers(retry_after))

    @classmethod
    def server_error(cls, retry_after: str | None = "0.01") -> Fault:
        return cls(500, "api_error", "Internal server error", _retry_headers(retry_after))

    @classmethod
    def auth(cls) -> Fault:
        return cls(401, "authentication_error", "invalid x-api-key")


@dataclass
class MidStream:
    """Start a normal stream (message_start + `text`), then fail: kind is "error" (an SSE
    error event of `error_type`), "reset" (TCP reset) or "stall" (wait for release_stalls)."""

    kind: str
    text: str = "partial "
    error_type: str = "overloaded_error"


Item = Reply | Fault | MidStream
Responder = Callable[[dict[str, Any]], Item | None]


def _retry_headers(retry_after: str | None) -> dict[str, str]:
    return {} if retry_after is None else {"retry-after": retry_after}


class StubServer:
    """The stub. Use as a context manager; `.url` is the base_url for the SDK."""

    def __init__(
        self,
        default: Reply | None = None,
        api_key: str | None = None,
        responder: Responder | None = None,
        model_cache: bool = False,
        models: list[dict[str, Any]] | None = None,
        models_api: bool = True,
        count_tokens: bool = True,
        counter: Callable[[dict[str, Any]], int] | None = None,
    ) -> None:
        self.default = default
        self.models = models if models is not None else [stub_models.entry(STUB_MODEL)]
        self.models_api = models_api
        self.count_tokens = count_tokens
        self.counter = counter
        self.counted: list[dict[str, Any]] = []  # count_tokens request bodies
        self.gets: list[str] = []  # GET paths
        self.model_cache = model_cache
        self._cache = PromptCache()
        self.api_key = api_key  # None: any x-api-key/authorization accepted (one is required)
        self.responder = responder
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.rejections: list[str] = []
        self.responder_errors: list[str] = []
        self.served: list[tuple[dict[str, Any], dict[str, int]]] = []
        self._queue: list[Reply | Fault | MidStream] = []
        self._cond = threading.Condition()
        self._release = threading.Event()
        self._ids = 0
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.daemon_threads = True
        self._httpd.stub = self  # type: ignore[attr-defined]
        self._httpd.handle_error = lambda request, client_address: None  # resets are expected
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def __enter__(self) -> StubServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._release.set()
        if self._thread.is_alive():
            self._httpd.shutdown()
        self._httpd.server_close()

    def push(self, *items: Reply | Fault | MidStream) -> None:
        with self._cond:
            self._queue.extend(items)

    def pending(self) -> int:
        with self._cond:
            return len(self._queue)

    def release_stalls(self) -> None:
        self._release.set()

    def wait_for_requests(self, n: int, timeout: float = 5.0) -> bool:
        """Block until at least n requests arrived (any outcome)."""
        with self._cond:
            return self._cond.wait_for(lambda: len(self.requests) >= n, timeout)

    # -- used by the handler -----------------------------------------------------------

    def _record(self, body: Any, headers: dict[str, str], count: bool = False) -> None:
        with self._cond:
            (self.counted if count else self.requests).append(body)
            self.headers.append(headers)
            self._cond.notify_all()

    def _reject(self, message: str) -> None:
        with self._cond:
            self.rejections.append(message)

    def _next(self) -> Reply | Fault | MidStream | None:
        with self._cond:
            return self._queue.pop(0) if self._queue else self.default

    def _pick(self, body: dict[str, Any]) -> Item | None:
        """The queue first, then the responder, then the default."""
        if self.responder is None or self.pending():
            return self._next()
        try:
            item = self.responder(body)
        except Exception as exc:  # reported to the test, answered as a non-retried 500
            with self._cond:
                self.responder_errors.append(f"{type(exc).__name__}: {exc}")
            return Fault(
                500, "api_error", f"stub responder failed: {exc}", {"x-should-retry": "false"}
            )
        return item if item is not None else self.default

    def _served(self, body: dict[str, Any], usage: dict[str, int]) -> None:
        with self._cond:
            self.served.append((body, usage))

    def _usage(self, body: dict[str, Any], reply: Reply) -> dict[str, int]:
        usage = reply_usage(body, reply)
        if self.model_cache and not reply.given_usage().keys() & {
            "input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"
        }:
            with self._cond:
                usage.update(self._cache.counts(body))
        return usage

    def _new_id(self, prefix: str) -> str:
        with self._cond:
            self._ids += 1
            return f"{prefix}_stub{self._ids:04d}"


# -- the HTTP side ----------------------------------------------------------------------


def _sse(event: str, data: dict) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "stub-anthropic/1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
        return

    @property
    def stub(self) -> StubServer:
        return self.server.stub  # type: ignore[attr-defined]

    def do_POST(self) -> None:  # noqa: N802 - http.server naming
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            body = json.loads(raw or b"null")
        except json.JSONDecodeError:
            body = None
        path = self.path.split("?")[0]
        if len(raw) > REQUEST_MAX:
            self._error(413, "request_too_large", "Request exceeds the maximum allowed number "
                        "of bytes. The maximum request size is 32 MB.")
            return
        counting = path == "/v1/messages/count_tokens"
        if path != "/v1/messages" and not counting:
            self._error(404, "not_found_error", f"Not found: {path}")
            return
        self.stub._record(body, {k.lower(): v for k, v in self.headers.items()}, counting)
        if counting and not self.stub.count_tokens:  # a local server: attempt kept, then 404
            self._error(404, "not_found_error", f"Not found: {path}")
            return
        if not self._authorized():
            self._error(401, "authentication_error", "invalid x-api-key")
            return
        problem = validate(body, count_only=path.endswith("count_tokens"))
        if problem:
            self.stub._reject(problem)
            self._error(400, "invalid_request_error", problem)
            return
        if counting:
            count = self.stub.counter or request_tokens
            self._json(200, {"input_tokens": count(body)})
            return
        self._answer(body, self.stub._pick(body))

    def do_GET(self) -> None:  # noqa: N802 - http.server naming
        path = self.path.split("?")[0]
        with self.stub._cond:
            self.stub.gets.append(path)
        if not path.startswith("/v1/models") or not self.stub.models_api:
            self._error(404, "not_found_error", f"Not found: {path}")
        elif not self._authorized():
            self._error(401, "authentication_error", "invalid x-api-key")
        else:
            self._json(*stub_models.answer(self.stub.models, path))

    def _authorized(self) -> bool:
        key = self.headers.get("x-api-key")
        bearer = (self.headers.get("authorization") or "").removeprefix("Bearer ")
        if self.stub.api_key is None:
            return bool(key or bearer)
        return self.stub.api_key in (key, bearer)

    def _answer(self, body: dict, item: Reply | Fault | MidStream | None) -> None:
        if isinstance(item, Reply | MidStream):
            reply = item if isinstance(item, Reply) else Reply(item.text)
            self._usage_now = self.stub._usage(body, reply)
        if item is None:
            self._error(
                500, "api_error", "stub: no scripted response left", {"x-should-retry": "false"}
            )
        elif isinstance(item, Fault):
            self._error(item.status, item.error_type, item.message, item.headers)
        elif not body.get("stream"):
            self._json(200, self._message(body, item))
        else:
            self._stream(body, item)
        if isinstance(item, Reply):
            self.stub._served(body, self._usage_now)

    def _message(self, body: dict, item: Reply | MidStream) -> dict:
        reply = item if isinstance(item, Reply) else Reply(item.text)
        content: list[dict] = []
        if reply.thinking and (body.get("thinking") or {}).get("type") in ("enabled", "adaptive"):
            if reply.thinking == REDACTED:
                content.append({"type": "redacted_thinking", "data": sign_thinking(REDACTED)})
            else:
                content.append({"type": "thinking", "thinking": reply.thinking,
                                "signature": sign_thinking(reply.thinking)})
        offered = {t.get("name") for t in body.get("tools") or [] if "type" in t}
        content += [b for b in reply.server_blocks if _server_name(b, reply) in offered]
        if reply.text:
            text = {"type": "text", "text": reply.text}
            if reply.citations:
                text["citations"] = reply.citations
            content.append(text)
        for call in reply.tool_calls:
            inp = call.input if isinstance(call.input, dict) else {}
            content.append(
                {
                    "type": "tool_use",
                    "id": call.id or self.stub._new_id("toolu"),
                    "name": call.name,
                    "input": inp,
                }
            )
        return {
            "id": self.stub._new_id("msg"),
            "type": "message",
            "role": "assistant",
            "model": body.get("model", STUB_MODEL),
            "content": content,
            "stop_reason": reply.stop,
            "stop_sequence": None,
            "usage": self._usage_now,
        }

    def _stream(self, body: dict, item: Reply | MidStream) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("request-id", self.stub._new_id("req"))
        self.end_headers()
        reply = item if isinstance(item, Reply) else Reply(item.text)
        msg = self._message(body, reply)
        usage = msg["usage"]
        start = dict(msg, content=[], stop_reason=None, usage=dict(usage, output_tokens=1))
        self._chunk(_sse("message_start", {"type": "message_start", "message": start}))
        self._chunk(_sse("ping", {"type": "ping"}))
        calls_from = sum(b["type"] != "tool_use" for b in msg["content"])
        uses = [b.get("name") for b in msg["content"] if b["type"] == "server_tool_use"]
        if uses:
            usage = dict(usage, server_tool_use={
                "web_search_requests": uses.count("web_search"),
                "web_fetch_requests": uses.count("web_fetch")})
        for index, block in enumerate(msg["content"]):
            self._block(index, block, reply, calls_from)
        if isinstance(item, MidStream):
            self._fail(item)
            return
        delta = {"stop_reason": msg["stop_reason"], "stop_sequence": None}
        self._chunk(
            _sse(
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": delta,
                    "usage": {k: v for k, v in usage.items()
                              if k in ("output_tokens", "server_tool_use")},
                },
            )
        )
        self._chunk(_sse("message_stop", {"type": "message_stop"}))
        self._chunk(b"")

    def _block(self, index: int, block: dict, reply: Reply, calls_from: int) -> None:
        start = {"text": {"type": "text", "text": ""},
                 "thinking": dict(block, thinking="", signature=""),
                 "redacted_thinking": block, "web_search_tool_result": block,
                 "web_fetch_tool_result": block}.get(block["type"], dict(block, input={}))
        self._chunk(
            _sse(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": start},
            )
        )
        if block["type"] == "text":
            pieces = [{"type": "citations_delta", "citation": c}
                      for c in block.get("citations", [])]
            pieces += [{"type": "text_delta", "text": p} for p in _split(block["text"])]
        elif block["type"] == "server_tool_use":
            raw = json.dumps(block["input"])
            pieces = [{"type": "input_json_delta", "partial_json": p} for p in _split(raw)]
        elif block["type"] in ("web_search_tool_result", "web_fetch_tool_result"):
            pieces = []
        elif block["type"] == "thinking":
            pieces = [{"type": "thinking_delta", "thinking": p} for p in _split(block["thinking"])]
            pieces.append({"type": "signature_delta", "signature": block["signature"]})
        elif block["type"] == "redacted_thinking":
            pieces = []
        else:
            call = reply.tool_calls[index - calls_from]
            raw = call.input if isinstance(call.input, str) else json.dumps(call.input)
            pieces = [{"type": "input_json_delta", "partial_json": p} for p in ["", *_split(raw)]]
        for delta in pieces:
            self._chunk(
                _sse(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                )
            )
        self._chunk(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))

    def _fail(self, item: MidStream) -> None:
        if item.kind == "error":
            err = {
                "type": "error",
                "error": {"type": item.error_type, "message": "stub mid-stream"},
            }
            self._chunk(_sse("error", err))
            self._chunk(b"")
            return
        if item.kind == "stall":
            self.stub._release.wait(timeout=30)
        # reset (or a released stall): abort the connection with a TCP RST
        self.wfile.flush()
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()
        self.close_connection = True

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _json(self, status: int, payload: dict, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", self.stub._new_id("req"))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, kind: str, message: str, headers: dict | None = None) -> None:
        self._json(status, {"type": "error", "error": {"type": kind, "message": message}}, headers)


def _server_name(block: dict, reply: Reply) -> str | None:
    """The server tool a block belongs to (a result block: through its server_tool_use)."""
    if block["type"] == "server_tool_use":
        return block.get("name")
    for use in reply.server_blocks:
        if use["type"] == "server_tool_use" and use.get("id") == block.get("tool_use_id"):
            return use.get("name")
    return None


def _split(text: str, size: int = 7) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]
