"""Threads and processes racing on one piece of shared state, released at the same moment.

A racer process runs a `python -c` script that prints "ready" once set up, waits for a line on
stdin, then works and prints its result. `Race` holds the threads at a barrier until every
process has been told to go; `finish` asserts that every process exited 0 (its stderr in the
failure), that every thread ended and that none raised, and returns each process's stdout.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

TIMEOUT = 60.0
SRC = str(Path(__file__).resolve().parents[2])  # the checkout: racers import its agent_cli
TESTS = str(Path(__file__).resolve().parents[1])  # and `support` (board_backends.open_board)


def env() -> dict[str, str]:
    """A racer process's environment: this checkout and its tests first on PYTHONPATH."""
    path = os.pathsep.join([SRC, TESTS, os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path}


def launch(script: str, *args: str) -> subprocess.Popen:
    """Start `python -c script args...` with pipes for stdin, stdout and stderr."""
    return subprocess.Popen(
        [sys.executable, "-c", script, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env(),
    )


def ready(proc: subprocess.Popen) -> subprocess.Popen:
    """Block until the process says it is ready (its first line), then return it."""
    line = proc.stdout.readline()
    assert line == "ready\n", proc.stderr.read()
    return proc


def go(proc: subprocess.Popen) -> None:
    """Release a process waiting on its stdin."""
    proc.stdin.write("go\n")
    proc.stdin.flush()


class Race:
    """Threads and processes that start together; see the module docstring."""

    def __init__(self, timeout: float = TIMEOUT) -> None:
        self.timeout = timeout
        self.procs: dict[str, subprocess.Popen] = {}
        self.errors: list[BaseException] = []
        self._work: list[tuple[Callable[..., Any], tuple]] = []
        self._threads: list[threading.Thread] = []

    def process(self, name: str, script: str, *args: str) -> subprocess.Popen:
        """Launch a racer process and wait until it is ready (it starts at `go`)."""
        self.procs[name] = proc = ready(launch(script, *args))
        return proc

    def thread(self, fn: Callable[..., Any], *args: Any) -> None:
        """A racer thread running fn(*args) from `go` on; what it raises fails `finish`."""
        self._work.append((fn, args))

    def go(self) -> None:
        """Start the threads at a barrier, tell every process to go, then open the barrier."""
        start = threading.Barrier(len(self._work) + 1)

        def run(fn: Callable[..., Any], args: tuple) -> None:
            try:
                start.wait(self.timeout)
                fn(*args)
            except BaseException as exc:  # reported by the test, not lost in the thread
                self.errors.append(exc)

        self._threads = [threading.Thread(target=run, args=w, daemon=True) for w in self._work]
        for t in self._threads:
            t.start()
        for proc in self.procs.values():
            go(proc)
        start.wait(self.timeout)

    def finish(self) -> dict[str, str]:
        """Wait for every racer; each process's stdout by name."""
        outputs = {}
        for name, proc in self.procs.items():
            out, err = proc.communicate(timeout=self.timeout)
            assert proc.returncode == 0, f"{name}: {err}"
            outputs[name] = out
        for t in self._threads:
            t.join(self.timeout)
            assert not t.is_alive(), "a racer thread is still running"
        assert self.errors == [], self.errors
        return outputs
