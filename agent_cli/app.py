"""The composition root: a session's shared state (Runtime) with its Team attached.

Every entry that runs agents (the CLI, tests, benchmarks) opens its session here, so the
Team is built in one place, above everything it wires together; runtime.py stays state only.
"""

from __future__ import annotations

from pathlib import Path

from .runtime import Runtime, RuntimeConfig


def open_runtime(workdir: Path, config: RuntimeConfig | None = None) -> Runtime:
    """Runtime.open(workdir, config) with a Team built on it and attached (`runtime.team`)."""
    from .team.manager import Team  # it pulls in the agent engine: only when a session runs

    runtime = Runtime.open(workdir, config)
    runtime.attach_team(Team(runtime))
    return runtime
