"""Who an agent is: name, role, team, workdir — and the block that re-states it after compaction.

A long-lived teammate loses its early turns to compaction; the identity block (plus whatever
the team layer says it currently holds) opens the first user message of the next request so
the model still knows who it is and what it owns.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass
class Identity:
    name: str
    role: str
    team: str = "default"
    workdir: Path = Path(".")

    def block(self, extra: str | None = None) -> str:
        """`<identity>You are 'alice', role: tester, team: default, workdir: /w.</identity>`."""
        text = (
            f"You are {self.name!r}, role: {self.role}, team: {self.team}, workdir: {self.workdir}."
        )
        if extra and extra.strip():
            text += " " + extra.strip()
        return f"<identity>{text}</identity>"
