"""Child process for the landing SIGKILL tests: lands one task, stopping at a named step.

argv: WORKDIR TASK_ID OWNER TOKEN KILL_AT ("-" = never). Prints "STEP name" for each step
and "AT name" before it blocks at KILL_AT (the parent kills it there), "LANDED" at the end.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from agent_cli.runtime import Runtime, RuntimeConfig


def main() -> None:
    workdir, task_id, owner, token, kill_at = sys.argv[1:6]
    rt = Runtime.open(Path(workdir), RuntimeConfig())
    landing = rt.worktrees.landing
    assert landing is not None

    def hook(step: str) -> None:
        print(f"STEP {step}", flush=True)
        if step == kill_at:
            print(f"AT {step}", flush=True)
            threading.Event().wait()  # until SIGKILL

    landing.on_step = hook
    task = rt.board.get(int(task_id))
    if task.status == "in_progress":
        landing.land(task, owner, token, "landed by the child")
    print("LANDED", flush=True)


if __name__ == "__main__":
    main()
