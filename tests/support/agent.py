"""Shared helpers for the agent-engine tests (tools, a gate stub, event capture, validity)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel

from agent_cli.agent import Agent, AgentSettings, Identity, validate
from agent_cli.events import Event, EventBus
from agent_cli.models.base import Message, ToolResultBlock
from agent_cli.models.scripted import ScriptedModel
from agent_cli.tools.base import Tool, ToolContext, ToolOutput, ToolSet

WAIT = 5.0  # seconds any test waits for another thread before failing


class TextIn(BaseModel):
    text: str


class NoArgs(BaseModel):
    pass


class PathIn(BaseModel):
    path: str
    content: str = ""


@dataclass
class Probe:
    """Tool side effects a test can observe and wait on."""

    started: threading.Event = field(default_factory=threading.Event)
    ran: list[str] = field(default_factory=list)


def make_tools(probe: Probe, big_chars: int = 5000) -> ToolSet:
    def echo(args: TextIn, ctx: ToolContext) -> str:
        probe.ran.append(f"echo:{args.text}")
        return args.text

    def boom(args: NoArgs, ctx: ToolContext) -> str:
        raise RuntimeError("disk on fire")

    def wait_cancel(args: NoArgs, ctx: ToolContext) -> str:
        probe.started.set()
        if ctx.cancel.wait(WAIT):
            return "process killed"
        return "never cancelled"

    def idle(args: NoArgs, ctx: ToolContext) -> ToolOutput:
        return ToolOutput("going idle", end_turn=True)

    def big(args: NoArgs, ctx: ToolContext) -> str:
        return "x" * big_chars

    def write(args: PathIn, ctx: ToolContext) -> str:
        probe.ran.append(f"write:{args.path}")
        return f"wrote {args.path}"

    return ToolSet(
        [
            Tool("echo", "Echo text back.", TextIn, echo, read_only=True),
            Tool("boom", "Always fails.", NoArgs, boom, read_only=True),
            Tool("wait_cancel", "Runs until cancelled.", NoArgs, wait_cancel),
            Tool("idle", "End the turn.", NoArgs, idle, read_only=True),
            Tool("big", "Large output.", NoArgs, big, read_only=True),
            Tool("write", "Write a file.", PathIn, write, permission="Write"),
        ]
    )


@dataclass
class Verdict:
    allowed: bool
    source: str = "test"
    message: str = ""


class DenyWrites:
    """A gate stub: denies the `write` tool, allows everything else; records calls."""

    def __init__(self) -> None:
        self.checked: list[str] = []

    def check(self, tool: Tool, args: BaseModel, ctx: ToolContext) -> Verdict:
        self.checked.append(tool.name)
        if tool.name == "write":
            return Verdict(False, message="denied by user: not now")
        return Verdict(True)


class Recorder:
    """Collects every event of a bus."""

    def __init__(self, bus: EventBus) -> None:
        self.events: list[Event] = []
        self._lock = threading.Lock()
        bus.subscribe(self._add)

    def _add(self, ev: Event) -> None:
        with self._lock:
            self.events.append(ev)

    def of(self, kind: type) -> list:
        with self._lock:
            return [e for e in self.events if isinstance(e, kind)]


def make_agent(
    workdir: Path,
    model: ScriptedModel,
    *,
    name: str = "alice",
    probe: Probe | None = None,
    gate=None,
    settings: AgentSettings | None = None,
    transcripts: bool = True,
    extra_identity=None,
    resume: bool = False,
    bus: EventBus | None = None,
) -> tuple[Agent, Recorder]:
    bus = bus or EventBus()
    rec = Recorder(bus)
    agent = Agent(
        Identity(name, "tester", "default", workdir),
        "You are a test agent.",
        model,
        make_tools(probe or Probe()),
        gate,
        bus,
        transcript_dir=workdir / ".team" / "transcripts" if transcripts else None,
        settings=settings,
        extra_identity=extra_identity,
        resume=resume,
    )
    return agent, rec


def assert_requests_valid(model: ScriptedModel) -> None:
    """Every request the model received obeys the Messages API's conversation rules."""
    assert model.requests, "the model received no request"
    for i, req in enumerate(model.requests):
        problems = validate(req.messages)
        assert problems == [], f"request {i} ({req.agent}) is invalid: {problems}"


def results_of(message: Message) -> list[ToolResultBlock]:
    return [b for b in message.content if isinstance(b, ToolResultBlock)]
