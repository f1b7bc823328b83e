"""Piped standard input for `agent-cli -p` (`git diff | agent-cli -p "review"`), as Claude
Code takes it: the pipe's text is added to the prompt, capped, and the cap is said both in the
prompt and on stderr; `-p` with no prompt takes the pipe as the prompt.

A terminal is never read (nothing was piped); neither is a character device (/dev/null).
When a prompt was given, a pipe that stays silent for PIPE_WAIT_S is left alone with one
stderr line (a parent process that holds our stdin open but never writes must not hang a run);
when the pipe is the prompt, it is waited for.
"""

from __future__ import annotations

import os
import select
import stat
from dataclasses import dataclass
from typing import TextIO

from ..errors import UserError

STDIN_CAP = 200_000  # bytes of piped input sent to the model
PIPE_WAIT_S = 3.0
STDIN_MARK = "\n\n<stdin>\n"  # where the piped text starts in the prompt


@dataclass(frozen=True)
class Piped:
    """What came through the pipe: the text (decoded, cut at the cap) and whether it was cut."""

    text: str
    size: int  # bytes kept
    cut: bool


def read_piped(stdin: TextIO | None, wait_s: float | None, cap: int = STDIN_CAP,
               err: TextIO | None = None) -> Piped | None:
    """The piped input on `stdin`, or None when stdin is a terminal, a device, closed, or a
    pipe silent for `wait_s` seconds (None: wait for it)."""
    fd = _fd(stdin)
    if fd is None or os.isatty(fd):
        return None
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return None
    if not (stat.S_ISFIFO(mode) or stat.S_ISREG(mode) or stat.S_ISSOCK(mode)):
        return None
    if not stat.S_ISREG(mode) and wait_s is not None:
        ready, _, _ = select.select([fd], [], [], wait_s)
        if not ready:
            if err is not None:
                err.write(f"agent-cli: nothing arrived on the piped standard input in "
                          f"{wait_s:g}s; going on without it (< /dev/null skips the wait)\n")
            return None
    data = _read_upto(fd, cap + 1)
    cut = len(data) > cap
    data = data[:cap]
    return Piped(data.decode("utf-8", errors="replace"), len(data), cut)


def _fd(stdin: TextIO | None) -> int | None:
    if stdin is None:
        return None
    try:
        return stdin.fileno()
    except (OSError, ValueError, AttributeError):  # a test's StringIO, a closed stream
        return None


def _read_upto(fd: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while size < limit:
        chunk = os.read(fd, min(65536, limit - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def cut_note(cap: int = STDIN_CAP) -> str:
    return (f"standard input was cut at {cap} bytes (the limit for piped input); "
            "the rest was not read")


def with_piped(prompt: str | None, stdin: TextIO | None, err: TextIO,
               cap: int = STDIN_CAP) -> str:
    """The prompt to send: `prompt` with the piped input added, or the piped input alone when
    no prompt was given. UserError when there is neither."""
    given = prompt if prompt and prompt.strip() else None
    piped = read_piped(stdin, PIPE_WAIT_S if given else None, cap, err)
    if piped is not None and piped.cut:
        err.write(f"agent-cli: {cut_note(cap)}\n")
        err.flush()
    if piped is None or not piped.text.strip():
        if given is None:
            raise UserError("-p needs a prompt: the one given is empty")
        return given
    note = f"\n({cut_note(cap)})" if piped.cut else ""
    if given is None:
        return piped.text + note
    body = piped.text.replace("</stdin", "&lt;/stdin")
    return f"{given}{STDIN_MARK}{body.rstrip(chr(10))}\n</stdin>{note}"
