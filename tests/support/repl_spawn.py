"""The real REPL in a pseudo-terminal (pexpect): `python -m agent_cli --model script:FILE -C
workdir` on a 40x120 xterm, with no ANTHROPIC_* from the caller's environment."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pexpect


def spawn_repl(workdir: Path, script: dict, timeout: float = 30) -> pexpect.spawn:
    """Write `script` next to the workdir and start the REPL on it (pexpect imported here, so
    a test file that skips without pexpect can still import this module)."""
    import pexpect

    path = workdir.parent / "script.json"
    path.write_text(json.dumps(script), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC")}
    env.update({"TERM": "xterm-256color", "PROMPT_TOOLKIT_NO_CPR": "1", "COLUMNS": "120"})
    return pexpect.spawn(
        sys.executable, ["-m", "agent_cli", "--model", f"script:{path}", "-C", str(workdir)],
        env=env, dimensions=(40, 120), encoding="utf-8", timeout=timeout,
    )
