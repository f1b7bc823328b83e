"""The Claude adapter: our ModelRequest in, our ModelEvents out, over the official SDK.

The SDK is imported only when the first request is made, so `import agent_cli` stays fast.
Credentials and endpoint are read by the SDK itself (ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN,
ANTHROPIC_BASE_URL); with only ANTHROPIC_BASE_URL set (a local llama-server, Ollama or LiteLLM
proxy) a placeholder key is sent, since such servers ignore it.

Streaming uses `client.messages.create(stream=True)`; anthropic_stream.StreamAccumulator
turns the raw events into ours (see there why not `messages.stream()`).

Prompt caching: cache_control {"type": "ephemeral"} on the last tool, the system block and the
last block of the last message (three of the four breakpoints the API allows): the tools and
system prompt are a cache read on every request of an agent after its first, and each request
reads the conversation its previous one wrote.
Failures are mapped to errors.RateLimited, Overloaded, AuthFailed, BadRequest or
ConnectionFailed -- also an `error` event mid-stream -- carrying the server's retry-after
(`retry-after-ms` / `retry-after`) and its `x-should-retry` verdict. The SDK's own retries are
off (max_retries=0): agent/retry.py retries for every model, visibly and cancellably, so the
two never double up. No SDK or httpx exception type leaves this module. Cancel: a watcher
closes the HTTP stream when the event is set, and the stream raises errors.Interrupted.
Token counts, the model's context window and the models list: anthropic_info.py.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

from .. import errors
from .anthropic_stream import StreamAccumulator
from .base import (
    DocumentBlock,
    ImageBlock,
    Message,
    ModelEvent,
    ModelRequest,
    RedactedThinkingBlock,
    ServerToolBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    check_cancel,
)
from .retry import retry_after_s
from .thinking import interleave_headers, max_tokens_for

EPHEMERAL = {"type": "ephemeral"}
LOCAL_PLACEHOLDER_KEY = "agent-cli-local"


class AnthropicModel:
    """A Model backed by the Messages API. `client` (an anthropic.Anthropic) is for tests."""

    runs_server_tools = True  # web search / fetch can be offered (models/web_tools.py)

    def __init__(self, name: str, client: Any = None, max_retries: int | None = None) -> None:
        self.name = name
        self._client = client
        self._max_retries = max_retries
        self._lock = threading.Lock()
        self._window: int | None = None  # the endpoint's context window once asked (0: none)

    def _get_client(self) -> Any:
        with self._lock:
            if self._client is None:
                self._client = make_client(self._max_retries)
            return self._client

    def stream(
        self, request: ModelRequest, cancel: threading.Event | None = None
    ) -> Iterator[ModelEvent]:
        check_cancel(cancel)
        params = build_params(self.name, request)
        raw = _open_stream(lambda: self._get_client().messages.create(**params, stream=True),
                           cancel)
        acc = StreamAccumulator()
        with _CancelWatch(cancel, lambda: _abort(raw)):
            try:
                for event in _guarded(raw, cancel):
                    check_cancel(cancel)
                    yield from acc.feed(event)
            finally:
                raw.close()
        check_cancel(cancel)
        yield from acc.finish()

    # -- tokens and models (anthropic_info.py) ----------------------------------------

    def count_tokens(self, request: ModelRequest, cancel: threading.Event | None = None) -> int:
        """The input tokens `request` would cost (the count-tokens endpoint); typed errors."""
        from .anthropic_info import count_tokens

        return count_tokens(self._get_client(), build_params(self.name, request), cancel)

    def context_window(self) -> int | None:
        """The endpoint's word on this model's context window, asked once (None: it has
        none to give)."""
        from .anthropic_info import model_window

        with self._lock:
            if self._window is not None:
                return self._window or None
        window = model_window(self._get_client(), self.name) or 0
        with self._lock:
            self._window = window
        return window or None

    def list_models(self) -> list[Any]:
        """The models the endpoint offers (anthropic_info.ModelListing); typed errors."""
        from .anthropic_info import list_models

        return list_models(self._get_client())


def _open_stream(create: Callable[[], Any], cancel: threading.Event | None) -> Any:
    """`create()` (the request, until the response headers arrive, or a whole short
    request such as count_tokens), given up at once when
    `cancel` is set: a server that holds the headers back cannot hold an interrupt. The call
    goes on in a helper thread, and a stream it opens after that is closed unread."""
    if cancel is None:
        try:
            return create()
        except Exception as exc:
            raise map_error(exc) from exc
    box: dict[str, Any] = {}
    lock = threading.Lock()
    done = threading.Event()

    def call() -> None:
        try:
            result = create()
        except Exception as exc:
            result, box["error"] = None, exc
        with lock:
            if box.get("abandoned") and hasattr(result, "close"):
                result.close()
            box["raw"] = result
            done.set()

    threading.Thread(target=call, name="model-request", daemon=True).start()
    while not done.wait(_CancelWatch.POLL_S):
        if cancel.is_set():
            with lock:
                if not done.is_set():
                    box["abandoned"] = True
                    raise errors.Interrupted("interrupted")
    if "error" in box:
        raise map_error(box["error"], cancel) from box["error"]
    return box["raw"]


def make_client(max_retries: int | None = None) -> Any:
    """An anthropic.Anthropic configured from the environment the way the SDK reads it."""
    import os

    import anthropic

    # agent/retry.py does the retrying (visible, cancellable); 0 keeps the SDK from doubling it
    kwargs: dict[str, Any] = {"max_retries": 0 if max_retries is None else max_retries}
    has_key = os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")
    if not has_key and os.environ.get("ANTHROPIC_BASE_URL"):
        kwargs["api_key"] = LOCAL_PLACEHOLDER_KEY
    try:
        return anthropic.Anthropic(**kwargs)
    except Exception as exc:
        raise map_error(exc) from exc


# -- request -------------------------------------------------------------------------


def build_params(model: str, request: ModelRequest) -> dict[str, Any]:
    """The SDK keyword arguments for one request, with prompt-cache breakpoints.

    With extended thinking on, thinking blocks go back exactly as received and max_tokens is
    raised above the budget; with it off they are left out (a server that does not know them
    would refuse the request, and the API ignores them then anyway)."""
    thinking = request.thinking
    messages = [_message_param(m, keep_thinking=bool(thinking)) for m in request.messages]
    if messages and messages[-1]["content"]:
        # the conversation so far: the next request of this agent reads it from the cache
        last = messages[-1]["content"][-1]
        messages[-1]["content"][-1] = {**last, "cache_control": EPHEMERAL}
    params: dict[str, Any] = {
        "model": model,
        "max_tokens": max_tokens_for(thinking, request.max_tokens),
        "messages": messages,
    }
    if thinking:
        params["thinking"] = dict(thinking)
        headers = interleave_headers(model, thinking)
        if headers:
            params["extra_headers"] = headers
    if request.system:
        params["system"] = [{"type": "text", "text": request.system, "cache_control": EPHEMERAL}]
    # tools the API runs (web search/fetch) first: the breakpoint on the last covers them all
    tools = [dict(t) for t in request.server_tools] + [t.model_dump() for t in request.tools]
    if tools:
        tools[-1]["cache_control"] = EPHEMERAL
        params["tools"] = tools
    return params


def _message_param(message: Message, keep_thinking: bool = True) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = []
    for b in message.content:
        if isinstance(b, ThinkingBlock | RedactedThinkingBlock):
            if keep_thinking:
                blocks.append(b.model_dump())
        elif isinstance(b, TextBlock):
            if b.text:
                blocks.append(b.model_dump())  # with its citations, when it has any
        elif isinstance(b, ServerToolBlock):
            blocks.append(b.model_dump())
        elif isinstance(b, ToolUseBlock):
            blocks.append({"type": "tool_use", "id": b.id, "name": b.name, "input": b.input})
        elif isinstance(b, ImageBlock | DocumentBlock):
            blocks.append(b.wire())  # an attachment: without our label
        elif isinstance(b, ToolResultBlock):
            result: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": b.tool_use_id,
                "content": _result_content(b.content),
            }
            if b.is_error:
                result["is_error"] = True
            blocks.append(result)
    if not blocks and message.content:  # a turn that only thought, sent with thinking off
        blocks.append({"type": "text", "text": "(thought without a reply)"})
    return {"role": message.role, "content": blocks}


def _result_content(content: str | list[Any]) -> str | list[dict[str, Any]]:
    """A tool result's content as the API takes it: the string, or its text, image and
    document parts (empty text parts left out: the API refuses them)."""
    if isinstance(content, str):
        return content
    parts = [p.wire() if isinstance(p, ImageBlock | DocumentBlock) else p.model_dump()
             for p in content if not isinstance(p, TextBlock) or p.text]
    return parts or "(no output)"


# -- errors and cancellation ---------------------------------------------------------


def _guarded(raw: Any, cancel: threading.Event | None) -> Iterator[Any]:
    """Iterate the SDK stream, mapping whatever it raises to our typed errors."""
    iterator = iter(raw)
    while True:
        try:
            event = next(iterator)
        except StopIteration:
            return
        except Exception as exc:
            raise map_error(exc, cancel) from exc
        yield event


def map_error(exc: BaseException, cancel: threading.Event | None = None) -> Exception:
    """The typed agent-cli error for an SDK/transport failure (after the SDK's retries)."""
    if cancel is not None and cancel.is_set():
        return errors.Interrupted("interrupted")
    if isinstance(exc, errors.AgentCliError):
        return exc
    import anthropic
    import httpx2

    if isinstance(exc, anthropic.APIStatusError):
        return _status_error(exc)
    if isinstance(exc, anthropic.APIConnectionError | httpx2.TransportError | httpx2.StreamError):
        return errors.ConnectionFailed(f"cannot reach the model API: {_one_line(exc)}")
    if isinstance(exc, TypeError) and "authentication" in str(exc):
        return errors.AuthFailed(
            "no credentials: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), or use --model demo"
        )
    if isinstance(exc, anthropic.AnthropicError | httpx2.HTTPError):
        return errors.ModelError(f"model API failure: {_one_line(exc)}")
    return exc if isinstance(exc, Exception) else errors.ModelError(_one_line(exc))


_BY_TYPE: dict[str, type[errors.ModelError]] = {
    "rate_limit_error": errors.RateLimited,
    "overloaded_error": errors.Overloaded,
    "api_error": errors.Overloaded,
    "authentication_error": errors.AuthFailed,
    "permission_error": errors.AuthFailed,
    "invalid_request_error": errors.BadRequest,
    "not_found_error": errors.BadRequest,
    "request_too_large": errors.BadRequest,
}


def _status_error(exc: Any) -> errors.ModelError:
    status = int(getattr(exc, "status_code", 0) or 0)
    err_type = getattr(exc, "type", None) or ""
    message = getattr(exc, "api_message", None) or _one_line(exc)
    cls = _BY_TYPE.get(err_type)
    if cls is None:
        if status == 429:
            cls = errors.RateLimited
        elif status in (401, 403):
            cls = errors.AuthFailed
        elif status >= 500:
            cls = errors.Overloaded
        elif 400 <= status < 500:
            cls = errors.BadRequest
        else:
            cls = errors.ModelError
    where = f"HTTP {status}" if status and status != 200 else "mid-stream"
    headers = getattr(getattr(exc, "response", None), "headers", None) or {}
    verdict = str(headers.get("x-should-retry", "")).lower()
    retryable = {"true": True, "false": False}.get(verdict)
    return cls(
        f"{err_type or cls.kind} ({where}): {message}",
        retry_after=retry_after_s(headers),  # models/retry.py
        retryable=retryable,
    )


def _abort(raw: Any) -> None:
    """Unblock a read in another thread: shut the socket down under the HTTP stream (closing
    the response from a second thread does not wake a blocked recv)."""
    import socket

    extensions = getattr(getattr(raw, "response", None), "extensions", None) or {}
    network = extensions.get("network_stream")
    sock = network.get_extra_info("socket") if network is not None else None
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
    else:
        raw.close()


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:300]


class _CancelWatch:
    """While active, a helper thread calls `close` as soon as `cancel` is set, so a read
    blocked on the network returns at once (the stream then raises errors.Interrupted)."""

    POLL_S = 0.05

    def __init__(self, cancel: threading.Event | None, close: Callable[[], None]) -> None:
        self._cancel = cancel
        self._close = close
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> _CancelWatch:
        if self._cancel is not None:
            self._thread = threading.Thread(target=self._watch, name="cancel-watch", daemon=True)
            self._thread.start()
        return self

    def _watch(self) -> None:
        assert self._cancel is not None
        while not self._done.is_set():
            if self._cancel.wait(self.POLL_S):
                if not self._done.is_set():
                    try:
                        self._close()
                    except Exception:  # closing a half-read stream may complain; we are leaving
                        pass
                return

    def __exit__(self, *exc: object) -> None:
        self._done.set()
