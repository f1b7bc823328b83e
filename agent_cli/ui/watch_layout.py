"""How a live `agent-cli watch` frame shares its rows: the board, the team pane and the
events pane, so the frame fits the terminal with a spare line and leaves no row empty that
a pane could use."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

TEAM_ROWS_MAX = 8  # the team pane's first share; it grows into rows the board cannot use
EVENT_ROWS_MAX = 15
MIN_BOARD_ROWS = 3  # one task and the '+N older' line


@dataclass
class Panes:
    team: bool = True
    events: bool = True


def budget(state: Any, height: int, panes: Panes, problems: int) -> tuple[int, int, int]:
    """Rows for the board, teammates and events so the frame fits `height` with a spare
    line: the panes get a share, and give rows back until the board has its minimum; then
    rows that would show no more of the board (it holds fewer tasks, or an overflowing
    column could not use them) go to teammates, then to events."""
    rows = {"team": min(TEAM_ROWS_MAX, max(1, (height - 12) // 3)),
            "events": min(EVENT_ROWS_MAX, max(1, (height - 15) // 3))}

    def left() -> int:
        used = 1 + problems + 2 + 1  # header, problems, the board's head and rule, spare
        used += team_height(state, rows["team"]) if panes.team else 0
        used += 2 + max(1, min(len(state.events), rows["events"])) if panes.events else 0
        return height - used

    while left() < MIN_BOARD_ROWS and (rows["team"] > 1 or rows["events"] > 1):
        pane = "events" if rows["events"] >= rows["team"] and rows["events"] > 1 else "team"
        rows[pane] -= 1
    sizes = column_sizes(state)
    board = board_shows(sizes, left())
    wants = {"team": len(state.members) if panes.team else 0,
             "events": min(len(state.events), EVENT_ROWS_MAX) if panes.events else 0}
    for pane in ("team", "events"):  # rows that show no more of the board go to the panes
        while rows[pane] < wants[pane]:
            rows[pane] += 1
            if left() < MIN_BOARD_ROWS or board_shows(sizes, left()) != board:
                rows[pane] -= 1
                break
    return max(MIN_BOARD_ROWS, left()), rows["team"], rows["events"]


def column_sizes(state: Any) -> list[int]:
    """How many tasks each board column holds."""
    return [sum(t.status == status for t in state.board.tasks)
            for status in ("pending", "in_progress", "completed")]


def board_shows(sizes: list[int], rows: int) -> tuple[int, ...]:
    """How many tasks of each column `rows` lines show (see fit)."""
    return tuple(n if 2 * n <= rows else max(0, (rows - 1) // 2) for n in sizes)


def team_height(state: Any, cap: int) -> int:
    """Lines the team pane takes (head and rule, lead, members, +more, a note, the total)."""
    n = len(state.members)
    lead = 1 if getattr(state, "lead", None) is not None else 0
    lines = 2 + lead + min(n, cap) + (1 if n > cap else 0)
    lines += 1 if state.team_problem or not n else 0
    return lines + (1 if n or lead else 0)
