"""Whether a workdir's board and team state is provably empty, told without the stores: the
first prompt of a fresh workdir draws its toolbar without building their pydantic models.

Empty means no task file in `.tasks/`, no `.team/config.json` (no member) and no
`.team/inbox/lead.jsonl` (no mail for the lead). Anything odd on the way (a symlink, a file
where a directory should be) is not proof: the stores read it and report it as they always do.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..board.presence import may_hold_tasks
from ..errors import AgentCliError
from ..fsutil import open_dir

ROSTER_FILE = ("config.json",)  # team/roster.py
LEAD_INBOX = ("inbox", "lead.jsonl")  # team/mailbox.py, the lead's inbox


def absent(team_dir: Path, parts: tuple[str, ...]) -> bool:
    """True only when `team_dir`/parts... provably does not exist (no symlink on the way)."""
    *dirs, name = parts
    try:
        dir_fd = open_dir(team_dir.joinpath(*dirs, name).parent)
    except FileNotFoundError:
        return True
    except (OSError, AgentCliError):
        return False
    try:
        os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    finally:
        os.close(dir_fd)
    return False


def provably_empty(tasks_dir: Path, team_dir: Path) -> bool:
    """No task, no team member, no mail for the lead: what the stores would read is nothing."""
    return (not may_hold_tasks(tasks_dir) and absent(team_dir, ROSTER_FILE)
            and absent(team_dir, LEAD_INBOX))
