"""Running one hook command: `sh -c COMMAND` in the workdir, in its own process group, the
event's JSON on stdin, bounded by its timeout (and the caller's cancel event).

On a timeout or a cancel the whole process group is killed (SIGKILL), so a hook that spawned
children leaves nothing behind. The reply keeps the exit code, stdout and stderr (each capped),
and stdout parsed as JSON when it starts with `{`. Nothing here raises: a hook that cannot
start is a reply with a warning.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

OUTPUT_CAP = 64 * 1024  # characters of stdout / stderr kept
POLL_S = 0.05  # how often a waiting hook re-checks the caller's cancel event


@dataclass
class HookReply:
    command: str
    code: int | None  # None: it did not finish (timed out, cancelled, could not start)
    stdout: str = ""
    stderr: str = ""
    data: dict[str, Any] | None = None  # stdout as JSON, when it is an object
    warning: str = ""  # why it had no effect (timeout, bad JSON, odd exit code, ...)


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _cap(text: str) -> str:
    return text if len(text) <= OUTPUT_CAP else text[:OUTPUT_CAP] + "\n[... output cut]"


def _finish(proc: subprocess.Popen) -> tuple[str, str]:
    """Collect what is left after the group was killed (bounded: pipes close on death)."""
    try:
        out, err = proc.communicate(timeout=2.0)
    except subprocess.TimeoutExpired:  # a child escaped the group and holds a pipe
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
        proc.wait(2.0)
        return "", ""
    return out or "", err or ""


def run_hook_command(
    command: str,
    payload: dict[str, Any],
    workdir: Path,
    timeout_s: float,
    cancel: threading.Event | None = None,
    env: dict[str, str] | None = None,
) -> HookReply:
    """Run one hook; see the module docstring."""
    full_env = {**os.environ, **(env or {})}
    data = json.dumps(payload, ensure_ascii=False)
    try:
        proc = subprocess.Popen(
            ["/bin/sh", "-c", command], cwd=workdir, env=full_env, text=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=True, encoding="utf-8", errors="replace",
        )
    except OSError as exc:
        return HookReply(command, None, warning=f"could not start: {exc.strerror or exc}")
    deadline = time.monotonic() + timeout_s
    stdin: str | None = data  # given once: communicate refuses input on a retry
    while True:
        left = deadline - time.monotonic()
        try:
            sending, stdin = stdin, None
            out, err = proc.communicate(sending, timeout=max(0.0, min(POLL_S, left)))
            break
        except subprocess.TimeoutExpired:
            pass
        except (BrokenPipeError, OSError):
            pass  # it did not read its stdin; keep waiting for it to end
        if cancel is not None and cancel.is_set():
            _kill_group(proc)
            out, err = _finish(proc)
            return HookReply(command, None, _cap(out), _cap(err), warning="interrupted")
        if time.monotonic() >= deadline:
            _kill_group(proc)
            out, err = _finish(proc)
            return HookReply(command, None, _cap(out), _cap(err),
                             warning=f"timed out after {timeout_s:g}s; killed")
    _kill_group(proc)  # anything it left running in its group goes with it
    return _parsed(HookReply(command, proc.returncode, _cap(out or ""), _cap(err or "")))


def _parsed(reply: HookReply) -> HookReply:
    text = reply.stdout.strip()
    if reply.code == 0 and text.startswith("{"):
        try:
            value = json.loads(text)
        except ValueError:
            reply.warning = "stdout starts with '{' but is not valid JSON; ignored"
            return reply
        if isinstance(value, dict):
            reply.data = value
    elif reply.code not in (0, 2):
        detail = reply.stderr.strip().splitlines()[-1:] or [""]
        reply.warning = f"exit code {reply.code}{': ' + detail[0] if detail[0] else ''}"
    return reply
