"""TerminalOut: lines written from many threads reach the terminal whole and in order, above a
running prompt too, and drain() returns only once everything written is on the screen (the
REPL drains before it draws an approval question, so nothing lands inside it)."""

from __future__ import annotations

import contextvars
import threading

from prompt_toolkit import PromptSession
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output.plain_text import PlainTextOutput

from agent_cli.ui.terminal import TerminalOut

WAIT = 10.0


class Screen:
    def __init__(self) -> None:
        self.text = ""
        self._lock = threading.Lock()

    def write(self, data: str) -> int:
        with self._lock:
            self.text += data
        return len(data)

    def flush(self) -> None:
        pass


def write_lines(term: TerminalOut, who: str, n: int) -> None:
    for i in range(n):
        term.write(f"{who} line {i}\n")


def test_drain_returns_once_every_thread_s_lines_are_on_screen_in_order() -> None:
    screen = Screen()
    with create_app_session(output=PlainTextOutput(screen)):
        term = TerminalOut(batch_s=0)
        try:
            threads = [
                threading.Thread(target=write_lines, args=(term, f"t{k}", 200)) for k in range(4)
            ]
            for t in threads:
                t.start()
            for t in threads:
                t.join(WAIT)
            assert term.drain(WAIT)
            lines = screen.text.splitlines()  # nothing left in flight: all 800 are there
        finally:
            term.close()
    assert len(lines) == 800
    for k in range(4):
        mine = [int(x.rsplit(" ", 1)[1]) for x in lines if x.startswith(f"t{k} ")]
        assert mine == list(range(200))


def test_lines_written_while_a_prompt_runs_go_above_it_and_drain_waits_for_them() -> None:
    screen = Screen()
    with (
        create_pipe_input() as pipe,
        create_app_session(input=pipe, output=PlainTextOutput(screen)),
    ):
        term = TerminalOut(batch_s=0)
        session = PromptSession(input=pipe, output=PlainTextOutput(screen))
        result: dict[str, str] = {}
        running = threading.Event()

        def ask() -> None:
            result["answer"] = session.prompt("question? ", pre_run=running.set)

        # The prompt runs in this app session (as the REPL's does), so writes go through
        # run_in_terminal on its loop rather than straight to the output.
        asker = threading.Thread(target=contextvars.copy_context().run, args=(ask,))
        asker.start()
        try:
            assert running.wait(WAIT)
            assert session.app.is_running
            write_lines(term, "teammate", 5)
            assert term.drain(WAIT)
            assert "teammate line 4" in screen.text
        finally:
            pipe.send_text("yes\r")
            asker.join(WAIT)
            term.close()
    assert result["answer"] == "yes"
