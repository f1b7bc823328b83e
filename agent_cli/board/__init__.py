"""The shared task board in `.tasks/`: models, the locked store, and the dependency rules."""

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
