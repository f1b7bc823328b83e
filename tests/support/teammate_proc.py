"""`agent-cli teammate NAME` as a real process: its printed lines collected by a reader
thread, waited for on a condition (never a sleep), and its end."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from pathlib import Path

from .cli import cli_env

WAIT = 60.0  # a process start, a model turn and git on a loaded 2-core machine


class TeammateProcess:
    """One teammate process; `lines` grows as it prints."""

    def __init__(self, workdir: Path, name: str, *flags: str,
                 env: dict[str, str] | None = None) -> None:
        """`env`: variables set for this process on top of the test's (cli_env)."""
        self.name = name
        self.lines: list[str] = []
        self._cond = threading.Condition()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "agent_cli", "teammate", name, "-C", str(workdir),
             "--idle-timeout", "0", *flags],
            env=cli_env(**(env or {})), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, start_new_session=True)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with self._cond:
                self.lines.append(line.rstrip("\n"))
                self._cond.notify_all()
        with self._cond:
            self.lines.append("<eof>")
            self._cond.notify_all()

    def wait_line(self, text: str, timeout: float = WAIT) -> str:
        """The first line containing `text`; fails with everything printed so far."""
        def found() -> str | None:
            return next((ln for ln in self.lines if text in ln), None)

        with self._cond:
            if not self._cond.wait_for(lambda: found() is not None or "<eof>" in self.lines,
                                       timeout) or found() is None:
                raise AssertionError(f"{self.name} never printed {text!r}; it printed:\n"
                                     + "\n".join(self.lines))
            return found() or ""

    def count(self, text: str) -> int:
        with self._cond:
            return sum(text in ln for ln in self.lines)

    def signal(self, sig: signal.Signals) -> None:
        self.proc.send_signal(sig)

    def wait(self, timeout: float = WAIT) -> int:
        code = self.proc.wait(timeout)
        self._reader.join(timeout)
        return code

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(WAIT)


def events(workdir: Path, task_id: int) -> list[tuple[str, str]]:
    """(action, actor) of every record of task `task_id` in .tasks/events.jsonl."""
    rows = []
    for line in (workdir / ".tasks" / "events.jsonl").read_text().splitlines():
        rec = json.loads(line)
        if rec.get("task_id") == task_id:
            rows.append((rec["action"], rec["actor"]))
    return rows


def run_cli(workdir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agent_cli", *args, "-C", str(workdir)],
                          env=cli_env(), capture_output=True, text=True, timeout=WAIT)
