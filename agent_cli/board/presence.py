"""Whether `.tasks/` may hold a task at all, told from its file names alone: the first prompt
of a workdir without a board need not build the board's pydantic models to say so."""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..errors import AgentCliError
from ..fsutil import open_dir

TASK_FILE_RE = re.compile(r"^task_(.*)\.json$")


def may_hold_tasks(tasks_dir: Path) -> bool:
    """False only when provably no task file is there: no `.tasks` at all, or a real directory
    (no symlink on the way) with no `task_*.json` name in it. Anything odd: True (the board
    reads it and reports what it finds)."""
    try:
        dir_fd = open_dir(tasks_dir)
    except FileNotFoundError:
        return False
    except (OSError, AgentCliError):
        return True
    try:
        with os.scandir(dir_fd) as entries:
            return any(TASK_FILE_RE.match(entry.name) for entry in entries)
    except OSError:
        return True
    finally:
        os.close(dir_fd)
