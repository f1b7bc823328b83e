"""idle_cpu_pct: CPU time an idle REPL uses, as a percentage of one core, measured from
/proc/<pid>/stat (utime + stime of the REPL process, all its threads) over a window, for a
REPL with no teammates and with 8 idle teammates. Target: below 0.3 for both.

The REPL runs in a pseudo-terminal with the offline demo model; teammates are started with
/spawn and left with nothing to do. What is measured is the REPL process's own CPU time, so
other load on the machine does not count (it only makes the window noisier).

    python bench/idle_cpu.py [--seconds 30] [--teammates 8] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import pexpect

TARGET_PCT = 0.3
PROMPT_READY = "\x1b[?2004h"  # bracketed paste goes on when the prompt is drawn


def cpu_seconds(pid: int) -> float:
    """utime + stime of process `pid` (every thread), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
    return ticks / os.sysconf("SC_CLK_TCK")


def start_repl(workdir: Path) -> pexpect.spawn:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC")}
    env.update({"TERM": "xterm-256color", "PROMPT_TOOLKIT_NO_CPR": "1"})
    child = pexpect.spawn(
        sys.executable, ["-m", "agent_cli", "--model", "demo", "-C", str(workdir)],
        env=env, dimensions=(40, 120), encoding="utf-8", timeout=30,
    )
    child.expect_exact(PROMPT_READY)
    return child


def spawn_teammates(child: pexpect.spawn, count: int) -> None:
    for i in range(count):
        name = f"mate{i}"
        child.send(f"/spawn {name} helper\r")
        child.expect(f"spawned {name}")


def settle(child: pexpect.spawn, seconds: float) -> None:
    """Let start-up work finish (reading output so the pty never fills)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            child.read_nonblocking(65536, timeout=max(0.05, end - time.monotonic()))
        except pexpect.TIMEOUT:
            pass


def measure(teammates: int, seconds: float) -> float:
    with tempfile.TemporaryDirectory(prefix="idle-cpu-") as tmp:
        child = start_repl(Path(tmp))
        try:
            spawn_teammates(child, teammates)
            settle(child, 3.0)
            before, t0 = cpu_seconds(child.pid), time.monotonic()
            settle(child, seconds)  # nothing typed: the REPL is idle
            used, wall = cpu_seconds(child.pid) - before, time.monotonic() - t0
        finally:
            child.sendcontrol("d")
            child.expect(pexpect.EOF, timeout=30)
            child.close()
    return 100.0 * used / wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--teammates", type=int, default=8)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    result = {
        "idle_cpu_pct": round(measure(0, args.seconds), 3),
        f"idle_cpu_pct_{args.teammates}_teammates": round(
            measure(args.teammates, args.seconds), 3),
        "seconds": args.seconds,
        "target_pct": TARGET_PCT,
    }
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
