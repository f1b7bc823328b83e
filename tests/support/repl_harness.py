"""The REPL driven in-process: prompt_toolkit pipe input, a Screen that records what it printed
(tests wait on a condition for text), and a teammate-like thread asking the real gate."""

from __future__ import annotations

import threading
from pathlib import Path

from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from agent_cli.app import open_runtime
from agent_cli.models.scripted import ScriptedModel
from agent_cli.runtime import Runtime, RuntimeConfig
from agent_cli.tools.base import ToolContext
from agent_cli.tools.workspace import workspace_tools
from agent_cli.ui.repl import Repl

WAIT = 10.0


class Screen:
    """What the REPL printed; tests wait on a condition for text to appear."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self.text = ""

    def write(self, data: str) -> int:
        with self._cond:
            self.text += data
            self._cond.notify_all()
        return len(data)

    def flush(self) -> None:
        pass

    def wait_for(self, needle: str, count: int = 1, timeout: float = WAIT) -> str:
        with self._cond:
            ok = self._cond.wait_for(lambda: self.text.count(needle) >= count, timeout)
        assert ok, f"{needle!r} (x{count}) never appeared on screen:\n{self.text}"
        return self.text


class Harness:
    def __init__(self, runtime: Runtime) -> None:
        self.rt = runtime
        self.screen = Screen()
        self._pipe_cm = create_pipe_input()
        self.pipe = self._pipe_cm.__enter__()
        self.repl = Repl(runtime, input=self.pipe, output=DummyOutput(), out=self.screen,
                         color=False, width=110, close_timeout=5.0)
        self.exit_code: int | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        self.exit_code = self.repl.run()

    def start(self) -> Harness:
        self.thread.start()
        self.screen.wait_for("Ctrl-D exits")
        return self

    def send(self, keys: str) -> None:
        self.pipe.send_text(keys)

    def type_into_prompt(self, text: str) -> None:
        """Type `text` (no Enter) and wait until the prompt's buffer holds it."""
        buf = self.repl.session.default_buffer
        there = threading.Event()

        def check(_buffer) -> None:
            if buf.text == text:
                there.set()

        buf.on_text_changed += check
        try:
            self.send(text)
            assert there.wait(WAIT), f"the prompt never showed {text!r}"
        finally:
            buf.on_text_changed -= check

    def command(self, line: str, expect: str) -> str:
        """Submit `line`, wait for a new `expect`; return the screen from there on."""
        seen, start = self.screen.text.count(expect), len(self.screen.text)
        self.send(line + "\r")
        return self.screen.wait_for(expect, count=seen + 1)[start:]

    def quit(self) -> None:
        if self.thread.is_alive():
            self.send("\x04")
            self.thread.join(WAIT)
        assert not self.thread.is_alive(), "the REPL did not exit on Ctrl-D"
        self._pipe_cm.__exit__(None, None, None)


def make_runtime(workdir: Path, script: dict) -> tuple[Runtime, ScriptedModel]:
    model = ScriptedModel(script)
    config = RuntimeConfig(model_factory=lambda agent, spec: model, idle_timeout_s=0)
    return open_runtime(workdir, config), model


def ask_from_thread(rt: Runtime, agent: str, command: str) -> tuple[threading.Thread, dict]:
    """A teammate-like thread running the real gate for a shell command."""
    box: dict = {}
    tool = next(t for t in workspace_tools() if t.name == "shell")

    def work() -> None:
        args = tool.parse({"command": command})
        box["decision"] = rt.gate.check(tool, args, ToolContext(agent, rt.workdir))

    t = threading.Thread(target=work, daemon=True)
    t.start()
    return t, box
