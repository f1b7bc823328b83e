"""Where the user's own Claude Code files live: `$CLAUDE_CONFIG_DIR` when set (Claude Code
honours it too), else `~/.claude`."""

from __future__ import annotations

import os
from pathlib import Path

CONFIG_ENV = "CLAUDE_CONFIG_DIR"


def claude_home() -> Path:
    env = os.environ.get(CONFIG_ENV, "").strip()
    return Path(env).expanduser() if env else Path.home() / ".claude"
