"""`agent-cli watch`: a live, full-screen view of a workdir's board and team for a second
terminal, or one plain frame (`--once`, or whenever stdout is not a terminal).

The loop waits in select() on the keyboard with a POLL_S timeout; each wake-up costs a
WatchSource.poll() (a few stats, a 64-byte read). A frame is drawn only when the data
changed, a key toggled a pane, the terminal was resized, or a shown duration ticked over
(durations are coarse past a minute), so an idle watch uses next to no CPU. Keys: q (or
Ctrl-C) quits, t toggles the team pane, m the events pane.
"""

from __future__ import annotations

import io
import os
import select
import signal
import sys
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ..pricing import PriceTable
from .style import make_console, safe_console
from .watch_data import WatchSource
from .watch_view import Panes, clock_key, frame, in_progress

if TYPE_CHECKING:
    from ..storeset import StoreSet

POLL_S = 0.1  # a change by another process shows within this (plus one draw)
DEFAULT_WIDTH = 100


def shown_path(workdir: Path) -> str:
    home = Path.home()
    try:
        return "~/" + str(workdir.relative_to(home))
    except ValueError:
        return str(workdir)


def where_of(workdir: Path, source: WatchSource) -> str:
    """The frame's title: the workdir, and the board's database when it is not files (its
    password masked: BoardLocation.shown)."""
    location = source.stores.location
    return shown_path(workdir) + ("" if location.kind == "files" else f" ({location.shown})")


def print_once(workdir: Path, out: TextIO, width: int | None = None,
               height: int | None = None, stores: StoreSet | None = None) -> None:
    """One frame, plain text unless `out` is a terminal, ending with a newline. `stores`:
    the team's (stores.open_stores); None: the workdir's files."""
    source = WatchSource(workdir, stores=stores)
    source.poll()
    color = out.isatty()
    if width is None:
        width = os.get_terminal_size(out.fileno()).columns if color else _env_width()
    buffer = io.StringIO()
    console = make_console(buffer, width, color)
    console.print(frame(source.state, where_of(workdir, source), PriceTable.load(), height,
                        Panes()))
    text = buffer.getvalue()
    if not color:  # a plain frame: no padding at the ends of lines
        text = "\n".join(line.rstrip() for line in text.splitlines()) + "\n"
    out.write(text)
    out.flush()


def _env_width() -> int:
    try:
        return max(40, int(os.environ.get("COLUMNS", "")))
    except ValueError:
        return DEFAULT_WIDTH


@contextmanager
def cbreak(fd: int | None):
    """Keys without Enter (Ctrl-C still interrupts); the terminal is restored on exit."""
    if fd is None:
        yield
        return
    import termios
    import tty

    saved = termios.tcgetattr(fd)
    try:
        tty.setcbreak(fd)
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


class Resized:
    """Notes SIGWINCH so the next wake-up redraws at the new size."""

    def __init__(self) -> None:
        self.flag = False
        self._old: Any = None

    def __enter__(self) -> Resized:
        self._old = signal.signal(signal.SIGWINCH, self._on)
        return self

    def _on(self, signum: int, frame: Any) -> None:
        self.flag = True

    def __exit__(self, *exc: object) -> None:
        signal.signal(signal.SIGWINCH, self._old)

    def take(self) -> bool:
        flag, self.flag = self.flag, False
        return flag


def run_live(workdir: Path, stores: StoreSet | None = None) -> int:
    """The full-screen view until q / Ctrl-C."""
    from rich.live import Live

    source = WatchSource(workdir, stores=stores)
    prices = PriceTable.load()
    panes = Panes()
    console = safe_console()
    fd = sys.stdin.fileno() if sys.stdin.isatty() else None
    where = where_of(workdir, source)
    last_clock: tuple | None = None
    try:
        with cbreak(fd), Resized() as resized, Live(
            console=console, screen=True, auto_refresh=False, redirect_stdout=False,
            redirect_stderr=False,
        ) as live:
            redraw = True
            working: tuple[int, list] = (-1, [])
            while True:
                redraw |= source.poll() | resized.take()
                now = datetime.now(UTC)
                if working[0] != source.state.version:
                    working = (source.state.version, in_progress(source.state))
                key = clock_key(working[1], now, source.state.worktrees)
                if redraw or key != last_clock:
                    last_clock = key
                    live.update(frame(source.state, where, prices, console.size.height,
                                      panes, now, live=True), refresh=True)
                    redraw = False
                keys = _read_keys(fd, POLL_S)
                if "q" in keys or "Q" in keys:
                    return 0
                for k in keys:
                    if k in "tT":
                        panes.team = not panes.team
                        redraw = True
                    elif k in "mM":
                        panes.events = not panes.events
                        redraw = True
    except KeyboardInterrupt:
        return 0


def _read_keys(fd: int | None, timeout: float) -> str:
    ready = select.select([fd] if fd is not None else [], [], [], timeout)[0]
    if not ready:
        return ""
    data = os.read(fd, 64)
    if not data:  # the terminal went away
        return "q"
    return data.decode("utf-8", "replace")


def run_watch(workdir: Path, once: bool = False, width: int | None = None,
              height: int | None = None, stores: StoreSet | None = None) -> int:
    if once or not sys.stdout.isatty():
        print_once(workdir, sys.stdout, width, height, stores)
        return 0
    return run_live(workdir, stores)
