"""Claude Code's `statusLine` setting: a command whose first output line is shown above the
REPL toolbar. It runs as Claude Code runs it (`bash -c`, the session's JSON on stdin: model,
workspace, session id, cwd), in the background on a thread: the prompt never waits for it;
it is run again at most every REFRESH_S seconds after the last run ended, when the toolbar is
drawn. Its output is shown with control characters made visible, one line, capped. A
repository's statusLine is a command: it is held until trusted like its hooks (layers.py)."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..safetext import visible

REFRESH_S = 3.0
TIMEOUT_S = 5.0
MAX_CHARS = 200


def status_command(raw: Any) -> str:
    """The command of a statusLine setting (`{"type": "command", "command": ...}`), or ""."""
    if isinstance(raw, dict) and raw.get("type", "command") == "command":
        cmd = raw.get("command")
        return cmd.strip() if isinstance(cmd, str) else ""
    return ""


class StatusLine:
    """One statusLine command; `text()` is what to show now (never blocks)."""

    def __init__(self, command: str, cwd: Path, payload: Callable[[], dict[str, Any]],
                 on_change: Callable[[], None], env: dict[str, str] | None = None) -> None:
        self.command = command
        self.cwd = Path(cwd)
        self.payload = payload
        self.on_change = on_change
        self.env = env
        self._lock = threading.Lock()
        self._text = ""
        self._running = False
        self._ended = float("-inf")
        self.ran = threading.Event()  # set after each run (tests wait on it)

    def text(self) -> str:
        """The last first line (maybe ""); starts a run when due and none is in flight."""
        with self._lock:
            shown = self._text
            due = not self._running and time.monotonic() - self._ended >= REFRESH_S
            if due:
                self._running = True
        if due:
            threading.Thread(target=self._run, name="status-line", daemon=True).start()
        return shown

    def _run(self) -> None:
        line = self._text
        try:
            proc = subprocess.run(["bash", "-c", self.command], cwd=self.cwd, env=self.env,
                                  input=json.dumps(self.payload()), capture_output=True,
                                  text=True, errors="replace", timeout=TIMEOUT_S)
            first = proc.stdout.splitlines()[0] if proc.stdout.strip() else ""
            line = visible(first, one_line=True)[:MAX_CHARS]
        except (OSError, subprocess.SubprocessError) as exc:
            line = f"statusLine: {type(exc).__name__}"
        finally:
            with self._lock:
                changed, self._text = line != self._text, line
                self._running, self._ended = False, time.monotonic()
            self.ran.set()
        if changed:
            self.on_change()


def session_payload(runtime: Any, model: str) -> dict[str, Any]:
    """The JSON a statusLine command reads, in Claude Code's field names."""
    workdir = str(runtime.workdir)
    session = getattr(runtime, "session", None)
    out: dict[str, Any] = {
        "hook_event_name": "Status", "session_id": runtime.current_session_id(),
        "cwd": workdir, "model": {"id": model, "display_name": model},
        "workspace": {"current_dir": workdir, "project_dir": workdir},
    }
    if session is not None and getattr(session, "lead_transcript", None) is not None:
        out["transcript_path"] = str(session.lead_transcript)
    return out
