"""The one-line refusals for placements where no command runs (shared by gate and runner)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .manager import Sandbox


def refusal(place: str, sandbox: Sandbox | None) -> str:
    """Why a command placed `place` does not run at all ("" when it may run)."""
    if place == "blocked" and sandbox is not None:
        return (f"the shell command was not run: the sandbox is unavailable "
                f"({sandbox.availability.why}) and sandbox.failIfUnavailable is set")
    if place == "refused":
        return ("the shell command was not run: sandbox.allowUnsandboxedCommands is false, "
                "so no command may leave the sandbox; run it without dangerouslyDisableSandbox")
    return ""
