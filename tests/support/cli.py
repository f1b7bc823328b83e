"""The command line run as a real process with no model configured: no ANTHROPIC_* and no
AGENT_CLI_MODEL* from the caller's environment, no compaction threshold unless given."""

from __future__ import annotations

import os


def cli_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC", "AGENT_CLI_M"))}
    env.pop("AGENT_CLI_COMPACT_AT", None)
    return {**env, **extra}
