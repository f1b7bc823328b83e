"""Benchmark of the agent engine: what one turn costs us, and what importing agent-cli costs.

    python bench/engine.py [--runs N] [--json]

turn_overhead_ms      median wall time of one run_turn where the model answers instantly with
                      one read-only tool call, then a final text (transcript written, events
                      emitted): everything that is ours, none of the model's. Target <= 5 ms.
turn_overhead_scripted_ms  the same with the test ScriptedModel (it deep-copies each request).
import_ms             `import agent_cli` in a fresh interpreter, minus interpreter startup.
import_engine_ms      `import agent_cli.agent` (the turn loop) the same way. Target <= 150 ms.
anthropic_imported    whether importing the engine pulled in the SDK (must be false).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pydantic import BaseModel

from agent_cli.agent import Agent, Identity
from agent_cli.events import EventBus
from agent_cli.models.base import Message, ResponseDone, TextBlock, ToolUseBlock, Usage
from agent_cli.models.scripted import Call, Reply, ScriptedModel
from agent_cli.tools.base import Tool, ToolSet


class ReadArgs(BaseModel):
    path: str


def read_tool(workdir: Path) -> Tool:
    def read(args: ReadArgs, ctx) -> str:
        return (workdir / args.path).read_text()

    return Tool("read_file", "Read a file.", ReadArgs, read, read_only=True)


class InstantModel:
    """Answers at once: a read_file call first, then a final text. No copies, no waits."""

    name = "instant"

    def __init__(self) -> None:
        use = ToolUseBlock(id="toolu_1", name="read_file", input={"path": "notes.txt"})
        self._replies = [
            ResponseDone(Message(role="assistant", content=[use]), "tool_use", Usage()),
            ResponseDone(
                Message(role="assistant", content=[TextBlock(text="The notes say hello.")]),
                "end_turn",
                Usage(input_tokens=50, output_tokens=6),
            ),
        ]
        self._n = 0

    def stream(self, request, cancel=None):
        reply = self._replies[self._n % 2]
        self._n += 1
        yield reply


def scripted() -> ScriptedModel:
    return ScriptedModel(
        {"bench": [Reply("", [Call("read_file", {"path": "notes.txt"})]), Reply("Hello.")]}
    )


def turn_ms(make_model, runs: int) -> float:
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        (workdir / "notes.txt").write_text("hello\n" * 20)
        tools = ToolSet([read_tool(workdir)])
        bus = EventBus()
        bus.subscribe(lambda ev: None)  # a renderer that does nothing
        for i in range(runs):
            agent = Agent(
                Identity("bench", "tester", "default", workdir),
                "You are a benchmark.",
                make_model(),
                tools,
                None,
                bus,
                transcript_dir=workdir / ".team" / "transcripts" / str(i % 10),
            )
            start = time.perf_counter()
            result = agent.run_turn("What do the notes say?")
            times.append((time.perf_counter() - start) * 1000)
            assert result.stop_reason == "end_turn", result
    return statistics.median(times)


def fresh_import_ms(statement: str, runs: int) -> float:
    def once(code: str) -> float:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        return (time.perf_counter() - start) * 1000

    base = statistics.median(once("pass") for _ in range(runs))
    full = statistics.median(once(statement) for _ in range(runs))
    return max(0.0, full - base)


def anthropic_imported() -> bool:
    code = "import sys, agent_cli, agent_cli.agent; print('anthropic' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.strip() == "True"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300, help="turns to time (default 300)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    turn_ms(InstantModel, 20)  # warm up
    figures = {
        "turn_overhead_ms": round(turn_ms(InstantModel, args.runs), 3),
        "turn_overhead_scripted_ms": round(turn_ms(scripted, max(20, args.runs // 3)), 3),
        "import_ms": round(fresh_import_ms("import agent_cli", 15), 1),
        "import_engine_ms": round(fresh_import_ms("import agent_cli.agent", 15), 1),
        "anthropic_imported": anthropic_imported(),
    }
    if args.json:
        print(json.dumps(figures))
    else:
        targets = {"turn_overhead_ms": 5.0, "import_engine_ms": 150.0}
        for key, value in figures.items():
            note = f"  (target <= {targets[key]:g})" if key in targets else ""
            print(f"{key:28} {value}{note}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
