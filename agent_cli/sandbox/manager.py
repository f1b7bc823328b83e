"""The session's sandbox: settings + availability, where a command runs, how it is wrapped.

`placement(command, disable)` is asked by both the permission gate (what to ask) and the
shell runner (how to run), so they never disagree:
- "off":         the sandbox is not enabled: the normal gate, run as before;
- "unavailable": enabled but bubblewrap cannot run here: a warning, the normal gate;
- "blocked":     enabled, unavailable and failIfUnavailable: no shell command runs;
- "sandboxed":   runs inside the agent's boundary;
- "excluded":    an excludedCommands command: outside, through the normal gate;
- "outside":     the model asked for dangerouslyDisableSandbox: outside, always asks;
- "refused":     it asked to leave but allowUnsandboxedCommands is false.
"""

from __future__ import annotations

import shlex
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .boundary import Boundary, build_boundary
from .bwrap import Availability, bwrap_argv, probe, sandbox_env
from .config import SandboxSettings

Placement = str  # one of the words in the module docstring
RUNS_INSIDE = "sandboxed"


@dataclass
class Wrapped:
    """What the runner needs for one sandboxed command, and what to tell afterwards."""

    argv: list[str]
    env: dict[str, str]
    box: Boundary
    blocked: list[str] = field(default_factory=list)  # hosts the proxy refused meanwhile
    done: Callable[[], None] = lambda: None


class Sandbox:
    """Built once per session (Runtime). `deny_read_rules()` gives the specifiers of the
    policy's `Read(...)` deny rules at call time."""

    def __init__(
        self,
        settings: SandboxSettings,
        workdir: Path,
        deny_read_rules: Callable[[], list[str]] = list,
        availability: Availability | None = None,
        proxy_factory: Callable[[tuple[str, ...]], object] | None = None,
        interactive: Callable[[], bool] = lambda: False,
        command_env: Callable[[], dict[str, str]] = dict,
    ) -> None:
        """`interactive()`: a human can answer now (the REPL): a command then gets the
        proxy even with no allowedDomains, and its first request to a domain asks."""
        self.settings = settings
        self.workdir = Path(workdir)
        self.deny_read_rules = deny_read_rules
        self._availability = availability
        self._lock = threading.Lock()
        self.proxy_factory = proxy_factory
        self.interactive = interactive
        self.command_env = command_env  # the settings' `env`, added to every command
        self._proxy = None
        self._counts: dict[str, int] = {}  # agent -> commands the gate let run sandboxed

    # ----- state ------------------------------------------------------------------------
    @property
    def enabled(self) -> bool:
        return self.settings.enabled

    @property
    def availability(self) -> Availability:
        with self._lock:
            if self._availability is None:
                self._availability = probe() if self.settings.enabled else Availability(False)
            return self._availability

    @property
    def active(self) -> bool:
        """Enabled and able to run: commands are confined."""
        return self.enabled and self.availability.ok

    def placement(self, command: str, disable: bool = False) -> Placement:
        if not self.enabled:
            return "off"
        if not self.availability.ok:
            return "blocked" if self.settings.fail_if_unavailable else "unavailable"
        if disable:
            return "outside" if self.settings.allow_unsandboxed else "refused"
        if self.excluded(command):
            return "excluded"
        return RUNS_INSIDE

    def count(self, agent: str) -> None:
        """One more command of `agent` allowed to run inside (for /team)."""
        with self._lock:
            self._counts[agent] = self._counts.get(agent, 0) + 1

    def counts(self) -> dict[str, int]:
        with self._lock:
            return dict(self._counts)

    def excluded(self, command: str) -> bool:
        """The command line starts with an excludedCommands entry (on a word boundary).
        Only the start is looked at: an excluded command still passes the normal gate."""
        try:
            words = shlex.split(command)
        except ValueError:
            return False
        for entry in self.settings.excluded_commands:
            want = entry.removesuffix(":*").removesuffix(" *").split()
            if want and words[: len(want)] == want:
                return True
        return False

    # ----- running ------------------------------------------------------------------------
    def boundary(self, workspace: Path) -> Boundary:
        return build_boundary(workspace, self.settings, self.workdir,
                              list(self.deny_read_rules()))

    def wrap(self, command: str, workspace: Path, cwd: Path) -> Wrapped:
        """The argv and environment that run `command` inside `workspace`'s boundary."""
        box = self.boundary(workspace)
        proxy = self.proxy() if box.domains or self.interactive() else None
        if sys.platform == "darwin":
            return wrap_macos(box, command, proxy)
        if proxy is None:
            argv = bwrap_argv(box, command, cwd)
            return Wrapped(argv, sandbox_env(), box)
        session = proxy.session()  # type: ignore[attr-defined]
        argv = bwrap_argv(box, command, cwd, proxy_socket=session.path,
                          forwarder=forwarder_argv())
        return Wrapped(argv, sandbox_env(proxied=True), box, session.blocked, session.close)

    def proxy(self) -> object | None:
        """The filtering proxy for allowedDomains, started at first use (the settings'
        domains at that time; the human's "always" answers join it)."""
        with self._lock:
            if self._proxy is None and self.proxy_factory is not None:
                self._proxy = self.proxy_factory(self.settings.allowed_domains)
            return self._proxy

    def update(self, settings: SandboxSettings) -> None:
        """New settings (the human trusted the project's): the proxy restarts with them."""
        self.settings = settings
        self.close()

    def close(self) -> None:
        with self._lock:
            proxy, self._proxy = self._proxy, None
        if proxy is not None:
            proxy.close()  # type: ignore[attr-defined]

    # ----- what the user sees -----------------------------------------------------------
    def mode_line(self) -> str:
        s = self.settings
        if not s.enabled:
            return "off"
        if not self.availability.ok:
            then = "no shell command runs (failIfUnavailable)" if s.fail_if_unavailable \
                else "commands go through the normal permission gate"
            return f"enabled but unavailable: {self.availability.why}; {then}"
        auto = "sandboxed commands run without asking" if s.auto_allow \
            else "sandboxed commands ask as usual"
        leave = "" if s.allow_unsandboxed else "; leaving the sandbox is impossible"
        return f"on ({auto}{leave})"

    def banner(self) -> str:
        """One line for the start banner ("" when the sandbox is off)."""
        if not self.enabled:
            return ""
        if not self.availability.ok:
            fix = f" (install: {self.availability.fix})" if self.availability.fix else ""
            return f"sandbox unavailable: {self.availability.why}{fix}"
        net = "network: " + (", ".join(self.settings.allowed_domains) or "none")
        return f"sandbox on: each agent writes only its workspace; {net}"


def wrap_macos(box: Boundary, command: str, proxy: object | None) -> Wrapped:
    """The same boundary on macOS: sandbox-exec with a generated profile (seatbelt.py), a
    private TMPDIR per command, and the proxy on a localhost port the profile allows."""
    import shutil

    from .seatbelt import private_tmpdir, seatbelt_argv

    tmp = private_tmpdir()
    session = proxy.session(tcp=True) if proxy is not None else None  # type: ignore[attr-defined]
    port = session.port if session is not None else None
    argv = seatbelt_argv(box, command, tmp, port)
    env = sandbox_env(proxied=session is not None, tmpdir=str(tmp), port=port or 0)

    def done() -> None:
        if session is not None:
            session.close()
        shutil.rmtree(tmp, ignore_errors=True)

    return Wrapped(argv, env, box, session.blocked if session is not None else [], done)


def forwarder_argv() -> list[str]:
    """The in-sandbox bridge from 127.0.0.1:PROXY_PORT to the proxy's socket (a standalone
    script run by this Python, without site packages: it starts in milliseconds)."""
    script = Path(__file__).with_name("forwarder.py")
    return [sys.executable, "-I", "-S", str(script)]

