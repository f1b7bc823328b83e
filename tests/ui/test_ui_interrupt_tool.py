"""Esc interrupts a tool that is still running in the REPL: the lead's `sleep 60` shell call
(allowed by a rule) ends at once as interrupted, the turn stops, and the prompt takes the
next line. The tool honours the agent's cancel event; nothing waits for the command to end.
"""

from __future__ import annotations

import threading
from pathlib import Path

from support.repl_harness import WAIT, Harness

from agent_cli.app import open_runtime
from agent_cli.events import ToolFinished, ToolStarted
from agent_cli.models.scripted import Call, Reply, ScriptedModel
from agent_cli.runtime import RuntimeConfig


def test_escape_stops_a_running_shell_tool_and_the_turn(workdir: Path) -> None:
    model = ScriptedModel({"lead": [
        Reply("Waiting.", tool_calls=[Call("shell", {"command": "sleep 60"})]),
        Reply("Next turn."),
    ]})
    config = RuntimeConfig(model_factory=lambda agent, spec: model, idle_timeout_s=0,
                           allow=["Bash(sleep 60)"])
    rt = open_runtime(workdir, config)
    started, finished = threading.Event(), []

    def watch(event: object) -> None:
        if isinstance(event, ToolStarted) and event.tool == "shell":
            started.set()
        if isinstance(event, ToolFinished) and event.tool == "shell":
            finished.append(event)

    rt.events.subscribe(watch)
    h = Harness(rt).start()
    try:
        h.send("wait a minute\r")
        assert started.wait(WAIT)
        h.send("\x1b")
        # WAIT is far below the command's 60 s: only the cancel event can end it this soon
        assert h.repl.lead.wait_idle(WAIT), "the turn did not stop"
        assert finished and not finished[0].ok
        h.command("go on", "Next turn.")
    finally:
        h.quit()
