"""The REPL's prompt history file, `.agent-cli/history`, read and appended like every state
file (fsutil: no symlink on the way, regular file only): a link planted there is never read
or appended through; appends set it aside. A history over HISTORY_CAP loads only its newest
part, so a huge file costs bounded memory.
"""

from __future__ import annotations

import datetime
import logging
import os
from collections.abc import Iterable
from pathlib import Path

from prompt_toolkit.history import FileHistory

from ..errors import AgentCliError
from ..fsutil import append_line, open_state

log = logging.getLogger(__name__)
HISTORY_CAP = 8 << 20


class SafeFileHistory(FileHistory):
    """prompt_toolkit's FileHistory format, with safe opens and a size cap."""

    def __init__(self, path: Path) -> None:
        super().__init__(str(path))
        self.path = Path(path)
        self.problem = ""  # why the history could not be used, for a note

    def load_history_strings(self) -> Iterable[str]:
        data = self._tail()
        strings: list[str] = []
        lines: list[str] = []
        for raw in data.splitlines(keepends=True):
            line = raw.decode("utf-8", errors="replace")
            if line.startswith("+"):
                lines.append(line[1:])
                continue
            if lines:
                strings.append("".join(lines)[:-1])
            lines = []
        if lines:
            strings.append("".join(lines)[:-1])
        return reversed(strings)

    def store_string(self, string: str) -> None:
        block = f"\n# {datetime.datetime.now()}\n" + "".join(
            f"+{line}\n" for line in string.split("\n"))
        try:
            append_line(self.path, block, fsync=False)
        except AgentCliError as exc:  # unwritable: the session keeps its in-memory history
            self.problem = str(exc)

    def _tail(self) -> bytes:
        try:
            fd = open_state(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return b""
        except (OSError, AgentCliError) as exc:  # a link, FIFO, directory: never read
            self.problem = str(exc)
            log.warning("%s; history not loaded", exc)
            return b""
        try:
            size = os.fstat(fd).st_size
            data = os.pread(fd, HISTORY_CAP, max(0, size - HISTORY_CAP))
        finally:
            os.close(fd)
        if size > HISTORY_CAP:
            data = data[data.find(b"\n") + 1:]  # drop the cut first line
        return data
