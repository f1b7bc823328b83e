"""The explicit shared state of a session: no globals anywhere else.

Runtime owns the workdir and builds the shared pieces once: event bus, change signal, task
board, mailbox, roster, protocol store, permission policy, approval broker, audit log, gate,
hooks and (lazily) the worktrees. The four stores are built together at the first read of
any of them: their pydantic models cost more than the first prompt needs (a fresh workdir's
first prompt reads none of them; the worktrees get the board as a function for the same
reason). It builds no Team: the composition root (app.py) attaches one. Components take plain
paths and callbacks so they test alone.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .events import EventBus
from .models.retry import RetryPolicy
from .retrystatus import RetryStatus
from .wakeup import ChangeSignal

if TYPE_CHECKING:
    from .models.base import Model  # (pydantic message models: built with the first model)
    from .models.thinking import Thinking
    from .permissions.broker import ApprovalBroker
    from .team.manager import Team


@dataclass
class RuntimeConfig:
    """Session settings from the command line (and tests)."""

    model: str | None = None  # a --model spec: "demo", "script:PATH", or a Claude model name
    team_name: str = "default"
    # the team's board: a postgresql:// URL (--board, $AGENT_CLI_BOARD or the user's own
    # settings, resolved by the entry: stores.configured_location); None: the workdir's files.
    # Not in the repr: it may carry a password (BoardLocation.shown is how it is named)
    board: str | None = field(default=None, repr=False)
    board_notes: list[str] = field(default_factory=list)  # a repository's "board", not used
    permission_mode: str = "default"
    allow: list[str] = field(default_factory=list)
    add_dirs: list[str] = field(default_factory=list)  # --add-dir, absolute
    deny: list[str] = field(default_factory=list)
    allow_bypass: bool = False
    idle_timeout_s: float = 60.0  # 0 = never send an idle notification
    check_interval_s: float = 0.05  # how often a waiter re-checks other processes' changes
    # ... when a FileWatcher wakes waiters instead (a safety net, and plan expiry)
    watched_interval_s: float = 5.0
    compact_threshold_tokens: int | None = None  # None: a share of each model's window
    lease_s: float | None = None  # claim lease (None: $AGENT_CLI_LEASE_S, else 10 minutes)
    session: str | None = None  # None: no session; "new"; "continue"; or a session id
    worktrees: str | None = None  # "on" / "off" (--worktrees); None: settings, else auto
    # How model calls are retried (lead and teammates); None: defaults + AGENT_CLI_RETRY_*.
    retry: RetryPolicy | None = None
    append_system_prompt: str = ""  # --append-system-prompt: added to the lead's system prompt
    max_turns: int | None = None  # --max-turns: lead model requests in a headless run
    headless: bool = False  # -p: nobody can approve (the lead's system prompt says so)
    user_dir: Path | None = None  # ~/.agent-cli (settings, AGENTS.md); None: $AGENT_CLI_HOME
    # --trust-project-settings: the repository's allow rules, mode and hooks, unasked
    trust_project_settings: bool = False
    mode_from_flag: bool = False  # --permission-mode given: a trusted defaultMode waits
    thinking: Thinking | None = None  # extended thinking for every agent (models/thinking.py)
    sandbox: bool | None = None  # --sandbox / --no-sandbox; None: the settings decide
    # Tests inject models: (agent name, spec or None) -> Model.
    model_factory: Callable[[str, str | None], Model] | None = None
    # Who answers approvals the rules leave open: (the runtime being built) -> a broker with
    # ApprovalBroker's ask() / ui_attached surface; None: the local ApprovalBroker (the REPL
    # attaches its UI to it; with no UI, ask() refuses with the headless reason).
    broker_factory: Callable[[Runtime], ApprovalBroker] | None = None


CO_AUTHOR = "Claude <noreply@anthropic.com>"  # includeCoAuthoredBy: true, as Claude Code


class _Store:
    """A Runtime attribute built with the other stores at its first read (Runtime._open_stores),
    then a plain instance attribute; assigning one (a test's own store) replaces it."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, runtime: Runtime | None, owner: type | None = None):
        if runtime is None:
            return self
        runtime._open_stores()
        return runtime.__dict__[self.name]


class Runtime:
    """One session's shared state. Build with Runtime.open(workdir, config)."""

    def __init__(self, workdir: Path, config: RuntimeConfig | None = None) -> None:
        from .permissions.audit import AuditLog
        from .permissions.broker import ApprovalBroker
        from .permissions.gate import PermissionGate
        from .permissions.hooks import HookRunner, load_hooks
        from .permissions.layers import SettingsLayers
        from .permissions.policy import PermissionPolicy
        from .stores import board_location

        self.workdir = Path(workdir).resolve()
        self.config = config or RuntimeConfig()
        self.session_id = uuid.uuid4().hex
        self.tasks_dir = self.workdir / ".tasks"
        self.team_dir = self.workdir / ".team"
        self.events = EventBus()
        self.retries = RetryStatus()  # who waits to retry a model call (toolbar, /team)
        self.events.subscribe(self.retries.on_event)
        self.changes = ChangeSignal()
        # the team's stores, from the one factory (files, or the --board database), at first
        # use; a bad location is refused now, before anything else is built
        self.location = board_location(self.config.board, {}, None, self.config.team_name)
        self._stores_lock = threading.Lock()  # board, roster, mail, protocols: at first use
        self._stores_built = False
        if self.location.kind != "files":
            self._open_stores()  # a database: a missing backend or server is said at start
        self.closers: list[Callable[[], None]] = []  # run by close(), last added first
        from .state_migration import check as check_state

        # old host-private state moved once; what a repository carries of it, reported
        self.state_warnings = check_state(self.workdir, self.config.user_dir)
        self.settings = SettingsLayers(self.workdir, self.config.user_dir,
                                       trust_project=self.config.trust_project_settings)
        if self.settings.local.path.exists():  # whoever wrote it, git must not see it
            self.settings.keep_local_out_of_git()
        from .repo import keep_state_out_of_git

        keep_state_out_of_git(self.workdir, self.settings.value("commitBoard")[0] is True)
        self.policy = PermissionPolicy(
            self.workdir, layers=self.settings, mode=self.config.permission_mode,
            allow=self.config.allow, deny=self.config.deny,
            allow_bypass=self.config.allow_bypass, add_dirs=self.config.add_dirs)
        factory = self.config.broker_factory
        self.broker = factory(self) if factory is not None else ApprovalBroker()
        self.audit = AuditLog(self.team_dir / "audit.jsonl")
        from .permissions.claude_keys import settings_notes

        self.tool_env, self.settings_notes = self.settings.env()  # `env` of the settings
        self.settings_notes += settings_notes(self.settings, self.policy)
        self.settings_notes += self.config.board_notes
        self.settings_notes += self.policy.dir_notes  # additional directories left out
        self.sandbox = self._make_sandbox()
        self.gate = PermissionGate(self.policy, self.broker, self.audit, sandbox=self.sandbox)
        self.held_settings = self.settings.held()  # the REPL asks; else SessionStart warns
        specs, self.hook_warnings, self.held_hooks = load_hooks(self.settings)
        self.hooks = HookRunner(specs, self.workdir, self.events.emit, self.audit,
                                self.session_id, self._hook_context)
        self.gate.hooks = self.hooks  # PermissionRequest / Notification at an approval
        self._models: dict[str, Model] = {}
        self._models_lock = threading.Lock()
        self._team: Team | None = None  # attached by the composition root (app.py)
        self.mcp = None  # an McpManager when MCP servers are configured (set by the entry)
        self.session = None  # team.sessions.Session once team.resume.start_session ran
        self.resuming: list = []  # roster Members taken over, to start (team.resume)
        self._worktrees = None
        self._memory = None
        self._memory_lock = threading.Lock()

    board = _Store()  # the team's board (store_api.BoardStore): .tasks/ or the database
    roster = _Store()  # store_api.RosterStore: .team/config.json or the database
    mail = _Store()  # store_api.MailStore: .team/inbox/ or the database
    protocols = _Store()  # store_api.ProtocolStoreApi: .team/requests.json or the database
    stores = _Store()  # the StoreSet they came from (stores.open_stores)
    watcher = _Store()  # its wakeups(changes.notify): started by the team

    @property
    def stores_open(self) -> bool:
        """Whether the stores have been built (the toolbar draws without them until then)."""
        return self._stores_built

    def _open_stores(self) -> None:
        """Open the team's stores once (any thread), through the one factory
        (stores.open_stores); one a test put in place already is kept."""
        with self._stores_lock:
            if self._stores_built:
                return
            from .stores import open_stores

            opened = open_stores(self.workdir, self.location, on_change=self.changes.notify,
                                 on_event=self.events.emit, lease_s=self.config.lease_s)
            built = self.__dict__
            for name in ("board", "roster", "mail", "protocols"):
                built.setdefault(name, getattr(opened, name))
            built.setdefault("stores", opened)
            built.setdefault("watcher", opened.wakeups(self.changes.notify))
            self._stores_built = True

    def sandbox_settings(self):  # -> sandbox.config.SandboxSettings
        """The sandbox settings now (re-read after the human trusted the project's); the
        additional directories (--add-dir & co.) are writable inside it, as allowWrite."""
        from dataclasses import replace

        box = self.settings.sandbox_settings(self.config.sandbox)
        extra = tuple(str(d.path) for d in self.policy.extra_dirs()
                      if str(d.path) not in box.allow_write)
        return replace(box, allow_write=box.allow_write + extra) if extra else box

    def _make_sandbox(self):  # -> sandbox.manager.Sandbox
        from .sandbox.manager import Sandbox

        def deny_reads() -> list[str]:
            return [e.parsed.spec for e in self.policy.rules()
                    if e.effect == "deny" and e.parsed.family == "Read" and e.parsed.spec]

        return Sandbox(self.sandbox_settings(), self.workdir, deny_reads,
                       proxy_factory=self._start_proxy,
                       interactive=lambda: self.broker.ui_attached,
                       command_env=lambda: self.tool_env)

    def _start_proxy(self, domains: tuple[str, ...]):  # -> sandbox.proxy.DomainProxy
        from .sandbox.proxy import DomainProxy

        return DomainProxy(domains, self._ask_domain)

    def _ask_domain(self, host: str) -> str:
        """The first request to a domain allowedDomains does not name: ask the human
        ("once", "always", "deny"); headless: deny (sandbox/proxy.py)."""
        from .permissions.sandbox_domains import ask_domain

        return ask_domain(self.broker, self.settings, host)

    @classmethod
    def open(cls, workdir: Path, config: RuntimeConfig | None = None) -> Runtime:
        return cls(workdir, config)

    @property
    def team(self) -> Team:
        """The session's Team, attached by the composition root (app.open_runtime)."""
        if self._team is None:
            raise RuntimeError("no team attached: open the session with app.open_runtime")
        return self._team

    def attach_team(self, team: Team) -> None:
        self._team = team

    @property
    def worktrees(self):  # -> team.worktrees.Worktrees: a git worktree per claimed task
        with self._models_lock:
            if self._worktrees is None:
                from .team.worktrees import Worktrees

                co = self.settings.value("includeCoAuthoredBy")[0] is True
                self._worktrees = Worktrees(self.workdir, lambda: self.board,
                                            self.config.worktrees, events=self.events,
                                            mail=lambda: self.mail,
                                            sandbox=self.sandbox,
                                            co_author=CO_AUTHOR if co else "")
                if self._worktrees.landing is not None:
                    self._worktrees.landing.resume()  # a landing a killed run left
                    self._report_private(self._worktrees.private.warnings)
        return self._worktrees

    def _report_private(self, warnings: list[str]) -> None:
        """A host-private record found unusable or untrustworthy: one warning Notice each."""
        from .events import Notice

        for text in warnings:
            self.events.emit(Notice("lead", f"state: {text}", level="warning"))

    def retry_policy(self) -> RetryPolicy:
        """The configured retry policy, else the defaults with AGENT_CLI_RETRY_* applied."""
        import os

        return self.config.retry or RetryPolicy.from_env(os.environ)
    @property
    def memory(self):  # -> memory.ProjectMemory: read once, at first use
        """The project memory files (AGENTS.md, CLAUDE.md, ...); warnings become Notices."""
        with self._memory_lock:
            if self._memory is not None:
                return self._memory
            from .claude.paths import claude_home
            from .memory import load_memory

            rules = self.policy.read_rules((self.workdir,))
            self._memory = load_memory(self.workdir, self.settings.layer("user").path.parent,
                                       claude_home(),
                                       rules.withheld_path if rules is not None else None)
        from .events import Notice

        for warning in self._memory.warnings:
            self.events.emit(Notice("lead", f"memory: {warning}", level="warning"))
        return self._memory

    def current_session_id(self) -> str:
        """The open session's id (REPL, headless), else this process's own id."""
        return self.session.id if self.session is not None else self.session_id

    def _hook_context(self, agent: str) -> dict:
        """What every hook's JSON adds about `agent`: mode, team, and its task if it holds one."""
        from .names import LEAD

        extra: dict = {"permission_mode": self.policy.mode, "team_name": self.roster.team_name,
                       "session_id": self.current_session_id()}
        if agent != LEAD:
            extra["teammate_name"] = agent
        elif self.session is not None:  # the lead's transcript lives in its session
            extra["transcript_path"] = str(self.session.lead_transcript)
        held = self.board.held_by(agent)
        if held is not None:
            extra["task"] = {"id": held.id, "subject": held.subject}
        return extra

    def model_spec(self, spec: str | None = None) -> str:
        from .models.registry import resolve_spec

        return resolve_spec(spec or self.config.model)

    def model_name(self, agent: str, spec: str | None = None) -> str:
        """The name of the model `agent` gets, a bad spec refused at once (UserError), without
        building the demo or Claude adapter: the first prompt does not wait for them."""
        if self.config.model_factory is None:
            from .models.registry import model_name

            name = model_name(self.model_spec(spec))
            if name is not None:
                return name
        return self.make_model(agent, spec).name

    def make_model(self, agent: str, spec: str | None = None) -> Model:
        """The model for `agent`: the injected factory, else one shared adapter per spec."""
        if self.config.model_factory is not None:
            return self.config.model_factory(agent, spec)
        from .models.registry import make_model

        resolved = self.model_spec(spec)
        with self._models_lock:
            if resolved not in self._models:
                self._models[resolved] = make_model(resolved)
            return self._models[resolved]

    def recheck_interval(self) -> float:
        """How long a waiter may sleep before re-checking on-disk stamps: short when only
        polling can see other processes' changes, long when the stores' waker wakes it."""
        return self.config.watched_interval_s if self.watcher.active else \
            self.config.check_interval_s

    def close(self, timeout: float = 5.0) -> list[str]:
        """Close the team (Team.close: the session remembers who was running, then every
        teammate is asked to shut down), stop MCP servers and the change watcher, let go of
        the stores; return who was busy."""
        busy = [] if self._team is None else self._team.close(timeout)
        if self.mcp is not None:
            self.mcp.close()
        for closer in reversed(self.closers):  # e.g. the approval bridge of a database board
            closer()
        self.sandbox.close()
        if self._stores_built:  # never opened just to be closed
            self.watcher.close()
            self.stores.close()
        return busy
