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
    if runtime.location.kind != "files" and runtime.config.broker_factory is None:
        _bridge_remote_approvals(runtime)
    return runtime


def _bridge_remote_approvals(runtime: Runtime) -> None:
    """A lead on a database board: teammates on other hosts ask through the database, and
    this session's human answers them as local ones (pg/approval_bridge.py; it claims
    requests only while a UI is attached)."""
    from .pg.approval_bridge import ApprovalBridge
    from .team.roster import this_host

    bridge = ApprovalBridge(runtime.stores.database, runtime.broker, host=this_host(),
                            policy=runtime.policy, emit=runtime.events.emit).start()
    runtime.closers.append(bridge.close)
