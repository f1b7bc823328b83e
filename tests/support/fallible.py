"""Helpers for the fallible-model tests: a headless run through the real SDK against the
wire-level stub, with the lead scripted and each teammate's behaviour a function of the
request it sent (the way a sloppy model would answer).

`Crew(teammates={"alice": fn})` is the stub's responder: the lead creates the tasks it was
given and spawns the teammates, then answers its inbox with a one-line summary; a teammate's
`fn(body, turn)` returns its Reply (`turn` counts that teammate's requests from 0).
`run_headless_json(workdir, crew)` runs `run_headless` in this process (the same code as
`agent-cli -p ... --wait --output-format json`) and returns (report, exit code, stderr).
"""

from __future__ import annotations

import io
import json
import threading
from argparse import Namespace
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anthropic

from agent_cli.app import open_runtime
from agent_cli.models.anthropic import AnthropicModel
from agent_cli.models.retry import RetryPolicy
from agent_cli.runtime import Runtime, RuntimeConfig

from .e2e_claude import (
    agent_of,
    answered_calls,
    claimed_task,
    last_user_text,
    result_text,
)
from .stub_server import STUB_MODEL, Fault, Reply, StubServer, ToolUse

Behaviour = Callable[[dict[str, Any], int], Reply | Fault]
FAST_RETRY = RetryPolicy(attempts=8, budget_s=30.0, base_s=0.005, cap_s=0.05)


def complete(body: dict[str, Any], result: str = "done", token: str | None = None) -> Reply:
    """complete_task for the task the host auto-claimed last (its own claim token)."""
    claim = claimed_task(body)
    assert claim is not None, "no auto-claimed task in the conversation"
    return Reply(tool_calls=[ToolUse("complete_task", {
        "task_id": claim[0], "claim_token": token or claim[1], "result": result})])


def results(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """tool name -> its tool_result block, for the calls answered in the last user message."""
    return dict(answered_calls(body))


def error_of(body: dict[str, Any], tool: str) -> str:
    block = results(body)[tool]
    assert block.get("is_error") is True, f"{tool} did not fail: {block}"
    return result_text(block)


@dataclass
class Crew:
    """The stub's responder for one run (thread-safe)."""

    teammates: dict[str, Behaviour]
    tasks: list[dict[str, Any]] = field(default_factory=lambda: [{"subject": "A"}])
    lead_faults: list[Fault] = field(default_factory=list)  # answered before the first reply
    seen: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, body: dict[str, Any]) -> Reply | Fault:
        agent = agent_of(body, tuple(self.teammates))
        with self._lock:
            turn = self.seen.get(agent, 0)
            self.seen[agent] = turn + 1
            if agent == "lead" and self.lead_faults:
                return self.lead_faults.pop(0)
        try:
            if agent == "lead":
                return self.lead(body)
            return self.teammates[agent](body, turn)
        except AssertionError as exc:  # shown to the test, answered as a failure
            with self._lock:
                self.errors.append(f"{agent}: {exc}")
            raise

    def lead(self, body: dict[str, Any]) -> Reply:
        calls = results(body)
        if "<inbox>" in last_user_text(body):
            return self.lead_inbox(last_user_text(body))
        if "create_task" in calls:
            spawns = [ToolUse("spawn_teammate", {"name": n, "role": "worker"})
                      for n in self.teammates]
            return Reply("Spawning.", spawns)
        if "spawn_teammate" in calls:
            return Reply("The team is on it.")
        return Reply("Planning.", [ToolUse("create_task", t) for t in self.tasks])

    def lead_inbox(self, inbox: str) -> Reply:
        return Reply(f"inbox read: {inbox.count('<message ')} messages")

    def requests_of(self, stub: StubServer, agent: str) -> list[dict[str, Any]]:
        return [b for b in stub.requests
                if isinstance(b, dict) and b.get("messages")
                and agent_of(b, tuple(self.teammates)) == agent]


def wire_runtime(workdir: Path, stub: StubServer, **config: Any) -> Runtime:
    """A Runtime whose every agent talks to `stub` through the real SDK (no SDK retries)."""
    client = anthropic.Anthropic(base_url=stub.url, api_key="test", max_retries=0)
    model = AnthropicModel(STUB_MODEL, client=client)
    settings = {"idle_timeout_s": 0, "check_interval_s": 0.02, "retry": FAST_RETRY, **config}
    return open_runtime(workdir, RuntimeConfig(model_factory=lambda a, s: model, **settings))


def run_headless_json(
    workdir: Path, stub: StubServer, timeout: float = 30.0, **config: Any
) -> tuple[dict[str, Any], int, str]:
    """`-p go --wait --output-format json` in this process: (report, exit code, stderr)."""
    from agent_cli.ui.headless import run_headless

    rt = wire_runtime(workdir, stub, **config)
    out, err = io.StringIO(), io.StringIO()
    args = Namespace(prompt="go", wait=True, timeout=timeout, output_format="json")
    code = run_headless(rt, args, out=out, err=err)
    return json.loads(out.getvalue()), code, err.getvalue()


def assert_all_valid(stub: StubServer, crew: Crew | None = None) -> None:
    """No request the real API would refuse, and no responder surprise."""
    assert stub.rejections == []
    assert stub.responder_errors == []
    if crew is not None:
        assert crew.errors == []
