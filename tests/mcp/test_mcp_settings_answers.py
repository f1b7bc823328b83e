"""Claude Code's enableAllProjectMcpServers / enabledMcpjsonServers / disabledMcpjsonServers
answer the `.mcp.json` trust question only from the human's own files (~/.claude, an untracked
settings.local.json); the same keys in a repository's settings trust nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

from support.claude_user import put_json as put

from agent_cli.mcp.config import parse_servers
from agent_cli.mcp.manager import McpManager
from agent_cli.mcp.session import settings_preset
from agent_cli.permissions.layers import SettingsLayers

SERVERS = {"fx": {"command": sys.executable, "args": ["-c", "pass"]},
           "gy": {"command": sys.executable, "args": ["-c", "pass"]}}


def asked(workdir: Path) -> list[str]:
    """The project servers that would still be asked about at start."""
    specs = parse_servers(SERVERS, "project", ".mcp.json", os.environ)  # type: ignore[arg-type]
    runtime = SimpleNamespace(settings=SettingsLayers(workdir))
    return [s.name for s in McpManager(workdir, specs, preset=settings_preset(runtime))
            .needs_trust()]


def test_the_users_own_settings_answer_for_named_servers(workdir: Path,
                                                         claude_home: Path) -> None:
    assert asked(workdir) == ["fx", "gy"]
    put(claude_home / "settings.json", {"enabledMcpjsonServers": ["fx"]})
    assert asked(workdir) == ["gy"]
    put(workdir / ".claude/settings.local.json", {"enableAllProjectMcpServers": True,
                                                  "disabledMcpjsonServers": ["gy"]})
    assert asked(workdir) == []


def test_a_repositorys_settings_trust_none_of_its_own_servers(workdir: Path,
                                                              claude_home: Path) -> None:
    put(workdir / ".claude/settings.json", {"enableAllProjectMcpServers": True,
                                            "enabledMcpjsonServers": ["fx", "gy"]})
    put(workdir / ".claude/settings.local.json", {"enableAllProjectMcpServers": True})
    subprocess.run(["git", "init", "-q"], cwd=workdir, check=True)
    subprocess.run(["git", "add", "-A"], cwd=workdir, check=True)  # the local file, tracked
    assert asked(workdir) == ["fx", "gy"]
