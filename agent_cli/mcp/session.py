"""Building a session's McpManager from its config files, with its state changes as Notices."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..events import Notice
from .config import load_specs
from .manager import McpManager
from .server import McpServer


def build_manager(runtime: Any, flag_files: list[str]) -> McpManager | None:
    """The manager for `runtime`'s workdir and `--mcp-config` files; None when none is set up.

    A config file that cannot be used is a UserError (one line, before anything starts).
    """
    problems: list[str] = []
    specs = load_specs(runtime.workdir, flag_files, problems=problems)
    if not specs and not problems:
        return None

    def changed(server: McpServer) -> None:
        if server.state in ("ready", "failed"):
            level = "error" if server.state == "failed" else "info"
            runtime.events.emit(Notice("mcp", f"server {server.name}: {server.status}",
                                       level=level))

    manager = McpManager(runtime.workdir, specs, on_change=changed,
                         preset=settings_preset(runtime))
    manager.problems = problems
    return manager


def settings_preset(runtime: Any) -> Callable[[str], bool | None] | None:
    """The project-server answers in the human's own settings files (Claude Code's
    enableAllProjectMcpServers / enabledMcpjsonServers / disabledMcpjsonServers), read once."""
    settings = getattr(runtime, "settings", None)
    if settings is None:
        return None
    enable_all, enabled, disabled = settings.mcp_answers()

    def preset(name: str) -> bool | None:
        if name in disabled:
            return False
        return True if name in enabled or enable_all else None

    return preset
