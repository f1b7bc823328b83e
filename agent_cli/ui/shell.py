"""`!CMD`: the user's own shell command, run in the workdir without approval (the user typed
it), its output shown. Bounded by a timeout; Ctrl-C stops it.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from rich.console import Group
from rich.text import Text

MAX_LINES = 200


def run_user_shell(command: str, workdir: Path, timeout: float = 300.0) -> Group | Text:
    """Run `command` with the shell in `workdir`; return what to show."""
    command = command.strip()
    if not command:
        return Text("usage: !COMMAND (runs in the workdir, output shown here)", style="red")
    head = Text(f"$ {command}", style="bold")
    try:
        proc = subprocess.run(
            command, shell=True, cwd=workdir, stdin=subprocess.DEVNULL,
            capture_output=True, text=True, errors="replace", timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return Group(head, Text(f"stopped after {timeout:.0f}s", style="red"))
    except KeyboardInterrupt:
        return Group(head, Text("interrupted", style="yellow"))
    except OSError as exc:
        return Group(head, Text(f"cannot run: {exc.strerror or exc}", style="red"))
    parts: list[Text] = [head]
    out = (proc.stdout or "") + (proc.stderr or "")
    lines = out.rstrip("\n").splitlines()
    if len(lines) > MAX_LINES:
        cut = len(lines) - MAX_LINES
        lines = lines[-MAX_LINES:]
        parts.append(Text(f"… {cut} earlier lines not shown", style="dim"))
    if lines:
        parts.append(Text("\n".join(lines)))
    if proc.returncode != 0:
        parts.append(Text(f"exit {proc.returncode}", style="red"))
    return Group(*parts)
