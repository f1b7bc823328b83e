"""The command line against a database board, as real processes (no model configured, no
board from the caller's environment unless given), and members seeded on a team's roster."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from agent_cli.stores import BoardLocation, open_stores
from support.cli import cli_env


def agent(workdir: Path, *argv: str, env: dict[str, str] | None = None,
          timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`agent-cli -C workdir ARGV` as a process; `env` is added to a clean environment."""
    base = cli_env()
    base.pop("AGENT_CLI_BOARD", None)
    return subprocess.run([sys.executable, "-m", "agent_cli", "-C", str(workdir), *argv],
                          env={**base, **(env or {})}, capture_output=True, text=True,
                          timeout=timeout)


def seed_members(url: str, team: str, roles: dict[str, str]) -> None:
    """Put `roles` (name -> role) on team `team`'s roster in the database at `url`."""
    stores = open_stores(Path("."), BoardLocation("postgresql", url, team))
    try:
        for name, role in roles.items():
            stores.roster.add(name, role)
    finally:
        stores.close()
