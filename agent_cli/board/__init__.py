"""The shared task board in `.tasks/`: models, the locked store, and the dependency rules."""

from typing import TYPE_CHECKING, Any

__all__ = [
    "BoardSnapshot",
    "ClaimResult",
    "CompleteResult",
    "Problem",
    "Task",
    "TaskBoard",
    "TaskStatus",
    "Verify",
]

if TYPE_CHECKING:
    from .models import (
        BoardSnapshot,
        ClaimResult,
        CompleteResult,
        Problem,
        Task,
        TaskStatus,
        Verify,
    )
    from .store import TaskBoard


def __getattr__(name: str) -> Any:
    """Import lazily: the models pull in pydantic, which `agent-cli --help` does not need."""
    if name == "TaskBoard":
        from .store import TaskBoard

        return TaskBoard
    if name in __all__:
        from . import models

        return getattr(models, name)
    raise AttributeError(name)
