"""`!CMD`: the user's own shell command, run in the workdir without approval (the user typed
it), its output shown. It runs through the same runner as the shell tool (its own process
group, output capped); a timeout or Ctrl-C kills the whole group, background jobs included.
"""

from __future__ import annotations

import threading
from pathlib import Path

from rich.console import Group
from rich.text import Text

from ..errors import ToolError
from ..tools.shell import CommandResult, run_process

MAX_LINES = 200


def _run(command: str, workdir: Path, timeout: float) -> CommandResult | str:
    """run_process on a worker thread, so Ctrl-C here can set its cancel event."""
    cancel = threading.Event()
    box: list[CommandResult | str] = []

    def work() -> None:
        try:
            box.append(run_process(command, workdir, timeout, cancel))
        except ToolError as exc:
            box.append(str(exc))

    worker = threading.Thread(target=work, name="user-shell", daemon=True)
    worker.start()
    try:
        worker.join()
    except KeyboardInterrupt:
        cancel.set()
        worker.join()
    return box[0] if box else "cannot run the command"


def run_user_shell(command: str, workdir: Path, timeout: float = 300.0) -> Group | Text:
    """Run `command` with bash in `workdir`; return what to show."""
    command = command.strip()
    if not command:
        return Text("usage: !COMMAND (runs in the workdir, output shown here)", style="red")
    head = Text(f"$ {command}", style="bold")
    res = _run(command, workdir, timeout)
    if isinstance(res, str):
        return Group(head, Text(res, style="red"))
    parts: list[Text] = [head]
    lines = res.output.rstrip("\n").splitlines()
    if len(lines) > MAX_LINES:
        cut = len(lines) - MAX_LINES
        lines = lines[-MAX_LINES:]
        parts.append(Text(f"… {cut} earlier lines not shown", style="dim"))
    if lines:
        parts.append(Text("\n".join(lines)))
    if res.stopped:
        parts.append(Text(res.stopped, style="yellow"))
    elif res.code != 0:
        parts.append(Text(f"exit {res.code}", style="red"))
    return Group(*parts)
