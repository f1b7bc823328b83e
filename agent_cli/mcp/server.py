"""One MCP server's connection: started, listed and called through the SDK's `Client`, inside
the manager's event loop; `call` is the blocking entry for agent threads."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import AgentCliError
from .config import ServerSpec

STARTUP_TIMEOUT_S = 30.0
CALL_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class ListedTool:
    """A tool as the server listed it."""

    name: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool


class McpCallError(Exception):
    """A call could not be made or did not finish (server down, timeout, interrupted)."""


class McpServer:
    """State machine: untrusted | off | starting | ready | failed | stopped."""

    def __init__(
        self,
        spec: ServerSpec,
        log_path: Path | None,
        on_change: Any = None,
        cwd: Path | None = None,
        startup_timeout: float = STARTUP_TIMEOUT_S,
        call_timeout: float = CALL_TIMEOUT_S,
    ) -> None:
        self.spec = spec
        self.name = spec.name
        self.log_path = log_path
        self.cwd = cwd  # a stdio server's working directory when its entry names none
        self.startup_timeout = startup_timeout
        self.call_timeout = call_timeout
        self._on_change = on_change or (lambda server: None)
        self._lock = threading.Lock()
        self.state = "failed" if spec.error else "off"
        self.reason = spec.error
        self.tools: list[ListedTool] = []
        self.ever_ready = False
        self._client: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self.ready = threading.Event()  # set once it is ready or has failed

    # ----- state ------------------------------------------------------------------------
    def _set(self, state: str, reason: str = "") -> None:
        with self._lock:
            if self.state == state and self.reason == reason:
                return
            self.state, self.reason = state, reason
        if state in ("ready", "failed", "stopped"):
            self.ready.set()
        self._on_change(self)

    @property
    def status(self) -> str:
        """One line for /mcp and the banner: `ready (3 tools)`, `failed: reason`, ..."""
        with self._lock:
            state, reason, n = self.state, self.reason, len(self.tools)
        if state == "ready":
            return f"ready ({n} tool{'s' if n != 1 else ''})"
        if state == "untrusted":
            return "not started: not trusted (.mcp.json)"
        return f"{state}: {reason}" if reason else state

    def mark_untrusted(self) -> None:
        self._set("untrusted")

    # ----- the connection (runs in the manager's loop) -----------------------------------
    async def run(self) -> None:
        """Connect, list the tools, then hold the connection open until stop()."""
        from mcp import Client

        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        self._set("starting")
        log = self._open_log()
        try:
            async with contextlib.AsyncExitStack() as stack:
                if log is not None:
                    stack.callback(log.close)
                transport = await self._transport(stack, log)
                client = Client(transport)
                # asyncio.timeout, not wait_for: the SDK's anyio scopes must be entered and
                # left in this same task (wait_for would enter them in a task of its own).
                async with asyncio.timeout(self.startup_timeout):
                    await stack.enter_async_context(client)
                    listed = await self._list(client)
                with self._lock:
                    self.tools, self._client, self.ever_ready = listed, client, True
                self._set("ready")
                await self._stop.wait()
                with self._lock:
                    self._client = None
            if self.state == "ready":
                self._set("stopped")
        except asyncio.CancelledError:
            self._set("stopped")
            raise
        except BaseException as exc:  # a server that cannot start is a state, never a crash
            with self._lock:
                self._client = None
            self._set("failed", self._why(exc))

    async def _transport(self, stack: contextlib.AsyncExitStack, log: Any) -> Any:
        spec = self.spec
        if spec.transport == "stdio":
            from mcp import StdioServerParameters
            from mcp.client.stdio import stdio_client

            cwd = Path(spec.cwd).expanduser() if spec.cwd else None
            if self.cwd is not None:
                cwd = self.cwd / cwd if cwd is not None else self.cwd
            params = StdioServerParameters(
                command=spec.command, args=list(spec.args), env={**os.environ, **spec.env},
                cwd=str(cwd) if cwd is not None else None)
            return stdio_client(params, errlog=log if log is not None else _devnull(stack))
        from mcp.shared._httpx_utils import create_mcp_http_client

        if spec.transport == "sse":
            from mcp.client.sse import sse_client

            return sse_client(spec.url, headers=dict(spec.headers))
        from mcp.client.streamable_http import streamable_http_client

        http = create_mcp_http_client(headers=dict(spec.headers))
        await stack.enter_async_context(http)
        return streamable_http_client(spec.url, http_client=http)

    @staticmethod
    async def _list(client: Any) -> list[ListedTool]:
        out: list[ListedTool] = []
        cursor = None
        for _ in range(100):  # a paginator that never ends cannot hang the start
            page = await client.list_tools(cursor=cursor)
            for t in page.tools:
                hint = getattr(t.annotations, "read_only_hint", None) if t.annotations else None
                schema = dict(t.input_schema or {}) or {"type": "object", "properties": {}}
                out.append(ListedTool(t.name, t.description or "", schema, hint is True))
            cursor = page.next_cursor
            if not cursor:
                break
        return out

    def _open_log(self) -> Any:
        if self.log_path is None:
            return None
        from ..fsutil import open_state

        try:  # .team/mcp/<name>.log: no link on the way, a regular file, never a FIFO
            fd = open_state(self.log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND,
                            create_dirs=True)
        except (OSError, AgentCliError):
            return None
        return os.fdopen(fd, "a", encoding="utf-8")

    def _why(self, exc: BaseException) -> str:
        if isinstance(exc, BaseExceptionGroup):
            exc = _first_leaf(exc)
        if isinstance(exc, TimeoutError):
            text = f"did not answer within {self.startup_timeout:g}s"
        elif isinstance(exc, FileNotFoundError) and self.spec.transport == "stdio":
            text = f"command not found: {self.spec.command}"
        else:
            text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        tail = self.last_log_line()
        return f"{text} ({tail})" if tail and tail not in text else text

    def last_log_line(self) -> str:
        """The server's last stderr line (where a crash usually says why)."""
        if self.log_path is None:
            return ""
        from ..fsutil import open_state

        try:
            fd = open_state(self.log_path, os.O_RDONLY)
        except (OSError, AgentCliError):
            return ""
        try:
            tail = os.pread(fd, 4096, max(0, os.fstat(fd).st_size - 4096))
        except OSError:
            return ""
        finally:
            os.close(fd)
        lines = [x for x in tail.decode("utf-8", "replace").splitlines() if x.strip()]
        return lines[-1].strip()[:200] if lines else ""

    # ----- calls (any thread) --------------------------------------------------------------
    def call(self, tool: str, args: dict[str, Any], cancel: threading.Event) -> Any:
        """The server's CallToolResult; McpCallError when it cannot be had."""
        with self._lock:
            client, loop = self._client, self._loop
        if client is None or loop is None:
            raise McpCallError(f"MCP server {self.name} is not running ({self.status})")
        future = asyncio.run_coroutine_threadsafe(client.call_tool(tool, args), loop)
        try:
            return self._wait(future, cancel)
        except McpCallError:
            raise
        except BaseException as exc:
            if "connection closed" in str(exc).lower():
                with self._lock:
                    self._client = None
                self._set("failed", "server exited" + _paren(self.last_log_line()))
                self.stop()  # let the connection wind down (and reap the process)
                raise McpCallError(f"MCP server {self.name} exited during the call") from None
            raise McpCallError(f"{self.name}: {exc}") from None

    def _wait(self, future: concurrent.futures.Future, cancel: threading.Event) -> Any:
        done = threading.Event()
        future.add_done_callback(lambda _f: done.set())
        waited = 0.0
        while not done.wait(0.1):  # short waits only while a call is in flight
            waited += 0.1
            if cancel.is_set():
                future.cancel()
                raise McpCallError("interrupted by the user: the MCP call was cancelled")
            if waited >= self.call_timeout:
                future.cancel()
                raise McpCallError(f"{self.name} did not answer within {self.call_timeout:g}s")
        return future.result()

    def stop(self) -> None:
        """Ask the connection to close (thread-safe; returns at once)."""
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None:
            with contextlib.suppress(RuntimeError):  # the loop is already closed
                loop.call_soon_threadsafe(stop.set)


def _devnull(stack: contextlib.ExitStack | contextlib.AsyncExitStack) -> Any:
    fh = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - closed by the stack
    stack.callback(fh.close)
    return fh


def _first_leaf(group: BaseExceptionGroup) -> BaseException:
    exc: BaseException = group
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _paren(text: str) -> str:
    return f" ({text})" if text else ""
