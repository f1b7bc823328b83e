"""Benchmark of `agent-cli watch`: how soon a change by another process shows, and what an
idle watch costs.

    python bench/watch.py [--tasks N] [--probes N] [--idle-seconds S] [--json]

update_ms_p50 / update_ms_max   a task created by this process (TaskBoard.create returned) ->
                                its subject on the watch's screen (a real `agent-cli watch`
                                in an 80x24 pseudo-terminal). Target max <= 500 ms.
idle_cpu_pct                    CPU the watch process used while nothing changed for S
                                seconds (utime + stime from /proc), in percent of one core.
                                Target ~0.
idle_floor_pct                  the same for a bare Python loop waking in select() every
                                POLL_S and doing nothing (the floor, measured in this run).
poll_unchanged_us               one WatchSource.poll() when nothing changed (in-process).
snapshot_ms                     one board snapshot of the N-task board from a cold reader
                                (what a poll pays after a change, at worst).
frame_ms                        rendering one 80x24 frame of that board to text.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import pexpect

from agent_cli.board import TaskBoard
from agent_cli.pricing import PriceTable
from agent_cli.team.roster import Roster
from agent_cli.ui.style import make_console
from agent_cli.ui.watch_data import WatchSource
from agent_cli.ui.watch_view import Panes, frame


class Reader(threading.Thread):
    """Drains the pty (a full buffer would stall the watch) and notes when text appears."""

    def __init__(self, child: pexpect.spawn) -> None:
        super().__init__(daemon=True)
        self.child = child
        self.buffer = ""
        self.cond = threading.Condition()

    def run(self) -> None:
        while True:
            try:
                chunk = self.child.read_nonblocking(65536, timeout=1)
            except pexpect.TIMEOUT:
                continue
            except (pexpect.EOF, OSError):
                return
            with self.cond:
                self.buffer += chunk
                self.cond.notify_all()

    def wait_for(self, needle: str, since: int, timeout: float = 10.0) -> float:
        with self.cond:
            ok = self.cond.wait_for(lambda: needle in self.buffer[since:], timeout)
        if not ok:
            raise SystemExit(f"never saw {needle!r} on the watch's screen")
        return time.monotonic()

    def mark(self) -> int:
        with self.cond:
            return len(self.buffer)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def setup(workdir: Path, n_tasks: int) -> TaskBoard:
    board = TaskBoard(workdir / ".tasks")
    for i in range(n_tasks):
        board.create(f"job {i}", blocked_by=[i] if i % 3 == 2 else [])
    roster = Roster(workdir / ".team")
    for name in ("alice", "bob", "carol"):
        roster.add(name, "worker")
    return board


def in_process_figures(workdir: Path) -> dict:
    source = WatchSource(workdir)
    t0 = time.perf_counter()
    source.poll()
    snapshot_ms = (time.perf_counter() - t0) * 1000
    runs = 2000
    t0 = time.perf_counter()
    for _ in range(runs):
        source.poll()
    poll_us = (time.perf_counter() - t0) / runs * 1e6
    prices = PriceTable.load()
    t0 = time.perf_counter()
    for _ in range(20):
        console = make_console(io.StringIO(), 80, True)
        console.print(frame(source.state, str(workdir), prices, 24, Panes(), live=True))
    frame_ms = (time.perf_counter() - t0) / 20 * 1000
    return {"poll_unchanged_us": round(poll_us, 1), "snapshot_ms": round(snapshot_ms, 2),
            "frame_ms": round(frame_ms, 2)}


def live_figures(workdir: Path, board: TaskBoard, probes: int, idle_s: float) -> dict:
    env = {**os.environ, "TERM": "xterm-256color"}
    child = pexpect.spawn(sys.executable, ["-m", "agent_cli", "-C", str(workdir), "watch"],
                          dimensions=(24, 80), env=env, encoding="utf-8")
    reader = Reader(child)
    reader.start()
    try:
        reader.wait_for("pending", 0, timeout=30)
        latencies = []
        for i in range(probes):
            since = reader.mark()
            board.create(f"probe {i}")
            t0 = time.monotonic()
            latencies.append((reader.wait_for(f"probe {i}", since) - t0) * 1000)
        time.sleep(1.5)  # let the last redraw and the liveness check settle
        before = cpu_seconds(child.pid)
        time.sleep(idle_s)
        idle = (cpu_seconds(child.pid) - before) / idle_s * 100
    finally:
        child.sendline("q")
        child.close(force=True)
    return {
        "update_ms_p50": round(statistics.median(latencies), 1),
        "update_ms_max": round(max(latencies), 1),
        "idle_cpu_pct": round(idle, 2),
        "idle_seconds": idle_s,
    }


def floor_figure(idle_s: float) -> float:
    """CPU of a Python process that only wakes every POLL_S: what any poller pays."""
    import subprocess

    from agent_cli.ui.watch import POLL_S

    code = f"import select\nwhile True: select.select([], [], [], {POLL_S})"
    proc = subprocess.Popen([sys.executable, "-c", code])
    try:
        time.sleep(0.5)
        before = cpu_seconds(proc.pid)
        time.sleep(idle_s)
        return round((cpu_seconds(proc.pid) - before) / idle_s * 100, 2)
    finally:
        proc.kill()
        proc.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=500)
    parser.add_argument("--probes", type=int, default=10)
    parser.add_argument("--idle-seconds", type=float, default=5.0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        board = setup(workdir, args.tasks)
        figures = {"tasks": args.tasks, **in_process_figures(workdir)}
        figures.update(live_figures(workdir, board, args.probes, args.idle_seconds))
        figures["idle_floor_pct"] = floor_figure(args.idle_seconds)
    if args.json:
        print(json.dumps(figures))
    else:
        for key, value in figures.items():
            print(f"{key:20} {value}")


if __name__ == "__main__":
    main()
