"""McpManager: every configured MCP server of a session, one asyncio loop thread for all of
their connections, their tools for the agents, and a clean stop (no server process left)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import AgentCliError
from .config import ServerSpec
from .server import CALL_TIMEOUT_S, STARTUP_TIMEOUT_S, McpServer
from .trust import TrustStore


class McpManager:
    """Build with the session's specs; `start()` connects the trusted ones in the background."""

    def __init__(
        self,
        workdir: Path,
        specs: list[ServerSpec],
        *,
        on_change: Callable[[McpServer], None] | None = None,
        startup_timeout: float = STARTUP_TIMEOUT_S,
        call_timeout: float = CALL_TIMEOUT_S,
        preset: Callable[[str], bool | None] | None = None,
    ) -> None:
        """`preset(name)`: the answer the human's own settings give a project server
        (enabledMcpjsonServers, ...), else None (then the private trust record decides)."""
        self.workdir = Path(workdir)
        self.preset = preset
        self.trust = TrustStore(self.workdir)
        log_dir = self.workdir / ".team" / "mcp"
        self._on_change = on_change
        self.servers: dict[str, McpServer] = {
            s.name: McpServer(s, log_dir / f"{s.name}.log", self._changed, self.workdir,
                              startup_timeout, call_timeout)
            for s in specs
        }
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._tasks: list[concurrent.futures.Future] = []
        self._lock = threading.Lock()
        self._closed = False
        self._tools_cache: tuple[tuple, list] = ((), [])
        self.problems: list[str] = []  # config files that could not be used (shown by /mcp)
        self._answers: dict[str, bool] = {}  # trust answers given in this session

    def _changed(self, server: McpServer) -> None:
        if self._on_change is not None:
            self._on_change(server)

    # ----- trust ----------------------------------------------------------------------------
    def _answer(self, spec: ServerSpec) -> bool | None:
        if spec.name in self._answers:
            return self._answers[spec.name]
        said = self.preset(spec.name) if self.preset is not None else None
        if said is not None:
            return said
        try:
            return self.trust.answer(spec)
        except AgentCliError as exc:  # an unreadable settings.local.json: nobody trusted
            if str(exc) not in self.problems:
                self.problems.append(str(exc))
            return None

    def needs_trust(self) -> list[ServerSpec]:
        """Project servers the human has not answered for (their current definition)."""
        out = []
        for server in self.servers.values():
            spec = server.spec
            if spec.origin == "project" and not spec.error and self._answer(spec) is None:
                out.append(spec)
        return out

    def answer_trust(self, specs: list[ServerSpec], trusted: bool) -> str:
        """The human's answer: holds for this session, and is saved; "" or why not saved."""
        for spec in specs:
            self._answers[spec.name] = trusted
        try:
            self.trust.save(specs, trusted)
        except AgentCliError as exc:
            return str(exc)
        return ""

    def startable(self) -> list[McpServer]:
        """Servers that may start: from --mcp-config, or project ones the human trusted."""
        out = []
        for server in self.servers.values():
            spec = server.spec
            if spec.error:
                continue
            if spec.origin == "project" and self._answer(spec) is not True:
                server.mark_untrusted()
                continue
            out.append(server)
        return out

    # ----- lifecycle ----------------------------------------------------------------------
    def start(self) -> list[str]:
        """Connect every startable server in the background; the names being started."""
        servers = self.startable()
        if not servers:
            return []
        with self._lock:
            if self._closed:
                return []
            loop = self._ensure_loop()
            for server in servers:
                if server.state in ("off", "failed", "stopped", "untrusted"):
                    self._tasks.append(asyncio.run_coroutine_threadsafe(server.run(), loop))
        return [s.name for s in servers]

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            loop = asyncio.new_event_loop()
            ready = threading.Event()

            def run() -> None:
                asyncio.set_event_loop(loop)
                loop.call_soon(ready.set)
                loop.run_forever()

            self._thread = threading.Thread(target=run, name="mcp-loop", daemon=True)
            self._thread.start()
            ready.wait(5.0)
            self._loop = loop
        return self._loop

    def wait_ready(self, timeout: float) -> bool:
        """Block until every started server is ready or failed (headless, tests); False when
        `timeout` seconds passed first."""
        import time

        end = time.monotonic() + timeout
        for server in self.servers.values():
            if server.state in ("starting", "off") and not server.spec.error:
                if server.state == "off" and server.spec.origin == "project":
                    continue  # not started (not trusted)
                if not server.ready.wait(max(0.0, end - time.monotonic())):
                    return False
        return True

    def close(self, timeout: float = 10.0) -> None:
        """Stop every connection (each stops its server process), then the loop thread."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            loop, thread, tasks = self._loop, self._thread, list(self._tasks)
        for server in self.servers.values():
            server.stop()
        if loop is None:
            return
        if tasks:
            concurrent.futures.wait(tasks, timeout=timeout)
        for task in tasks:
            task.cancel()
        loop.call_soon_threadsafe(loop.stop)
        if thread is not None:
            thread.join(timeout)
        if not loop.is_running():
            loop.close()

    # ----- for agents and the UI ------------------------------------------------------------
    def tools(self) -> list[Any]:
        """Agent tools for every server that has been ready (a later failure keeps them, so
        a call says the server is down instead of the tool vanishing mid-conversation)."""
        from .tools import agent_tools

        servers = [s for s in self.servers.values() if s.ever_ready]
        key = tuple((s.name, id(s.tools)) for s in servers)
        cached_key, cached = self._tools_cache
        if key == cached_key:
            return cached
        built = [t for s in servers for t in agent_tools(s)]
        self._tools_cache = (key, built)
        return built

    def describe(self) -> list[tuple[McpServer, str]]:
        """(server, status line) for /mcp, in configuration order."""
        return [(s, s.status) for s in self.servers.values()]
