"""Where the user's own Claude Code files live: `$CLAUDE_CONFIG_DIR` when set (Claude Code
honours it too), else `~/.claude`."""

from __future__ import annotations

import os
from pathlib import Path

CONFIG_ENV = "CLAUDE_CONFIG_DIR"


def claude_home() -> Path:
    env = os.environ.get(CONFIG_ENV, "").strip()
    return Path(env).expanduser() if env else Path.home() / ".claude"


def lookup_dirs(kind: str, workdir: Path, claude_dir: Path,
                user_dir: Path) -> list[tuple[Path, str]]:
    """Where files of `kind` ("commands", "agents", "skills") are looked up, in order of
    precedence: the project's `.claude/` and `.agent-cli/`, then the user's two homes."""
    return [(workdir / ".claude" / kind, "project"),
            (workdir / ".agent-cli" / kind, "project"),
            (claude_dir / kind, "user"),
            (user_dir / kind, "user")]
