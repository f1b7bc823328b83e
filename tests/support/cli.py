"""The command line run as a real process with no model configured: no ANTHROPIC_* and no
AGENT_CLI_MODEL* from the caller's environment, no compaction threshold unless given."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def cli_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC", "AGENT_CLI_M"))}
    env.pop("AGENT_CLI_COMPACT_AT", None)
    return {**env, **extra}


def run_scripted(workdir: Path, script: dict, prompt: str, *extra: str,
                 home: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`agent-cli -C workdir --model script:FILE [extra] -p prompt` as a process (the script
    written next to the workdir; `home`: the user's ~/.agent-cli)."""
    path = workdir.parent / "script.json"
    path.write_text(json.dumps(script), encoding="utf-8")
    env = cli_env(**({"AGENT_CLI_HOME": str(home)} if home is not None else {}))
    return subprocess.run(
        [sys.executable, "-m", "agent_cli", "-C", str(workdir), "--model", f"script:{path}",
         *extra, "-p", prompt], env=env, capture_output=True, text=True, timeout=60)
