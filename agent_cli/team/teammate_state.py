"""The one state object a teammate's collaborators share (tracking, endings, protocol inbox,
idle loop): who it is and what its run remembers between turns. Teammate builds it and hands
it to each; its thread is the only writer, except the notes tools make through Teammate.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .plans import PlanMemory
from .stall import StallGuard

if TYPE_CHECKING:
    from .mailbox import MailMessage


@dataclass
class TeammateState:
    """One run of one teammate."""

    name: str
    role: str
    require_plan: bool
    born_at: str  # when this run started (UTC ISO 8601): a shutdown accepted before is stale
    plan_memory: PlanMemory = field(default_factory=PlanMemory)  # should the store lose it
    stalls: StallGuard = field(init=False)  # reminders for a held task left unfinished
    injections: list[str] = field(default_factory=list)  # user text for the next model call
    shutdown_msg: MailMessage | None = None  # the accepted shutdown request
    denial: str | None = None  # why a call of this turn was refused
    reported: bool = False  # the teammate told the lead itself about the denial this turn
    status: tuple | None = None  # (status, task id, reason) last written
    idle_stamps: tuple | None = None  # (board, inbox, watching board) while waiting
    watch_board: bool = True  # False once the idle_notification went out
    resume_held: bool = True  # the first idle check still has to look for a held task
    idle_hook_streak: int = 0  # turns in a row that a TeammateIdle hook asked for

    def __post_init__(self) -> None:
        self.stalls = StallGuard(self.name)

    @property
    def idle_reason(self) -> str:
        """The idle reason last written ("" when none)."""
        return self.status[2] if self.status else ""
