"""TerminalOut: how text reaches a real terminal while a prompt may be on it, from any thread.

It does what prompt_toolkit's patch_stdout does — a write made while a prompt is running
erases the prompt, prints above it and redraws it (raw, so colours survive) — plus one thing
that one cannot: `drain()` returns once everything written so far is on the screen. The REPL
drains before it shows an approval question, so no line lands while that question (a
prompt_toolkit application of its own) is drawn, where a redraw would garble it.

Writes go to one writer thread, in order; text written while a prompt runs is bundled for
`batch_s` so a burst of teammate lines costs one redraw. Used as a context manager it also
stands in for sys.stdout and sys.stderr, so a stray print cannot tear the prompt either.
"""

from __future__ import annotations

import queue
import sys
import threading
import time
from typing import Any

from prompt_toolkit.application import get_app_session, run_in_terminal

_STOP = object()


class TerminalOut:
    def __init__(self, batch_s: float = 0.05) -> None:
        self.batch_s = batch_s
        self._session = get_app_session()
        self._output = self._session.output  # taken before we replace sys.stdout
        self._queue: queue.Queue[Any] = queue.Queue()
        self._cond = threading.Condition()
        self._pending = 0
        self._thread = threading.Thread(target=self._run, name="terminal-out", daemon=True)
        self._thread.start()
        self._saved: tuple[Any, Any] | None = None

    # ----- file-like ------------------------------------------------------------------
    def write(self, text: str) -> int:
        if text:
            with self._cond:
                self._pending += 1
            self._queue.put(text)
        return len(text)

    def flush(self) -> None:
        pass  # every write is on its way already; drain() waits for it

    def isatty(self) -> bool:
        stdout = self._output.stdout
        return bool(stdout is not None and stdout.isatty())

    def fileno(self) -> int:
        return self._output.fileno()

    @property
    def encoding(self) -> str:
        return self._output.encoding()

    # ----- ours -----------------------------------------------------------------------
    def drain(self, timeout: float = 5.0) -> bool:
        """Block until everything written so far is on the screen (False on timeout)."""
        with self._cond:
            return self._cond.wait_for(lambda: self._pending == 0, timeout)

    def close(self) -> None:
        self._queue.put(_STOP)
        self._thread.join(5.0)

    def __enter__(self) -> TerminalOut:
        self._saved = (sys.stdout, sys.stderr)
        sys.stdout = sys.stderr = self  # type: ignore[assignment]
        return self

    def __exit__(self, *exc: object) -> None:
        self.drain()
        if self._saved is not None:
            sys.stdout, sys.stderr = self._saved
        self.close()

    # ----- the writer thread ----------------------------------------------------------
    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is _STOP:
                return
            texts = [item]
            stop = False
            while True:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is _STOP:
                    stop = True
                    break
                texts.append(more)
            above_prompt = self._emit("".join(texts))
            with self._cond:
                self._pending -= len(texts)
                self._cond.notify_all()
            if stop:
                return
            if above_prompt:
                time.sleep(self.batch_s)  # bundle the next burst into one redraw

    def _emit(self, text: str) -> bool:
        """Write `text`; True when it went above a running prompt."""
        app = self._session.app
        loop = getattr(app, "loop", None) if app is not None and app.is_running else None
        written = threading.Event()
        lock = threading.Lock()

        def write_once() -> None:
            with lock:
                if written.is_set():
                    return
                self._output.enable_autowrap()
                self._output.write_raw(text)
                self._output.flush()
                written.set()

        if loop is not None:
            try:
                loop.call_soon_threadsafe(lambda: run_in_terminal(write_once))
            except RuntimeError:  # the loop just closed: nothing runs it any more
                loop = None
            else:
                # The prompt may end before its loop runs our callback; then write directly.
                while not written.wait(0.05):
                    if not app.is_running:
                        break
        write_once()
        return loop is not None
