"""The host-private state of a workdir as the tests read it (private_state.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_cli.private_state import TRUST_FILE, PrivateStore


def trust_record(workdir: Path) -> dict[str, Any]:
    """The trust answers agent-cli keeps for `workdir` ({} when none)."""
    return PrivateStore(workdir).read(TRUST_FILE)
