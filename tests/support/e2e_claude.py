"""Helpers for the Claude end-to-end tests: a scripted team behind the wire-level stub, and
running the real `agent-cli` against it in a subprocess (no network beyond 127.0.0.1).

`TeamScript` is a stub responder: it tells the lead from a teammate by the system prompt
(prompts/teammate.md is rendered with the teammate's name) and decides each reply from the
conversation the agent sent, the way a model would: the lead creates tasks, spawns alice and
summarises its inbox; alice runs the command her auto-claimed task names, then completes the
task with the claim token the host injected, then goes idle. It remembers what it answered
per agent, and can answer a teammate's first request with a fault (529) to prove the retry.
"""

from __future__ import annotations

import os
import re
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .stub_server import Fault, Reply, ToolUse

MODEL = "claude-sonnet-4-5"
STUB_USAGE = {"cache_read_input_tokens": 120, "cache_creation_input_tokens": 30}
MAIN_PY = (
    "from pathlib import Path\n"
    "with Path('runs.log').open('a') as f:\n"
    "    f.write('ran\\n')\n"
    "print(42)\n"
)


CLAIM_RE = re.compile(r'<auto-claimed-task id="(\d+)" claim_token="([^"]+)"')


# -- reading a request, as a responder does -----------------------------------------------


def system_text(body: dict[str, Any]) -> str:
    """The request's system prompt as one string (blocks joined)."""
    system = body.get("system") or ""
    if isinstance(system, str):
        return system
    return "\n".join(b.get("text", "") for b in system if isinstance(b, dict))


def _texts(message: dict[str, Any]) -> list[str]:
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    return [
        b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text"
    ]


def last_user_text(body: dict[str, Any]) -> str:
    """The text blocks of the last user message, joined (tool results left out)."""
    users = [m for m in body.get("messages") or [] if m.get("role") == "user"]
    return "\n".join(_texts(users[-1])) if users else ""


def claimed_task(body: dict[str, Any]) -> tuple[int, str] | None:
    """(task id, claim token) of the latest `<auto-claimed-task>` block in the conversation."""
    for message in reversed(body.get("messages") or []):
        if message.get("role") != "user":
            continue
        for text in reversed(_texts(message)):
            found = CLAIM_RE.findall(text)
            if found:
                return int(found[-1][0]), found[-1][1]
    return None


def agent_of(body: dict[str, Any], teammates: tuple[str, ...]) -> str:
    """'lead' or the teammate whose name opens the system prompt."""
    first_line = system_text(body).strip().splitlines()[0] if system_text(body).strip() else ""
    for name in teammates:
        if f"You are {name}," in first_line:
            return name
    return "lead"


def answered_calls(body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(tool name, tool_result block) for each result in the last user message."""
    messages = body.get("messages") or []
    if len(messages) < 2 or not isinstance(messages[-1].get("content"), list):
        return []
    names = {
        b["id"]: b["name"]
        for b in messages[-2].get("content") or []
        if isinstance(b, dict) and b.get("type") == "tool_use"
    }
    return [
        (names.get(b.get("tool_use_id"), "?"), b)
        for b in messages[-1]["content"]
        if isinstance(b, dict) and b.get("type") == "tool_result"
    ]


def result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, list):
        return "\n".join(c.get("text", "") for c in content if isinstance(c, dict))
    return str(content or "")


@dataclass
class TeamScript:
    """The stub's responder for one scripted team run (thread-safe: requests overlap)."""

    teammates: tuple[str, ...] = ("alice",)
    with_verify_task: bool = True  # False: only task 1 (one shell run, one approval)
    fault_first_teammate_call: Fault | None = None
    seen: dict[str, int] = field(default_factory=dict)
    faults_sent: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, body: dict[str, Any]) -> Reply | Fault:
        agent = agent_of(body, self.teammates)
        with self._lock:
            count = self.seen.get(agent, 0)
            self.seen[agent] = count + 1
            if agent != "lead" and count == 0 and self.fault_first_teammate_call is not None:
                self.faults_sent.append(agent)
                return self.fault_first_teammate_call
        reply = self.lead(body) if agent == "lead" else self.teammate(agent, body)
        reply.usage = dict(STUB_USAGE)
        return reply

    def lead(self, body: dict[str, Any]) -> Reply:
        calls = [name for name, _ in answered_calls(body)]
        if "<inbox>" in last_user_text(body):
            return Reply("alice reported back: both tasks are completed and verified.")
        if "create_task" in calls:
            return Reply(
                "Tasks are on the board; spawning a checker.",
                [ToolUse("spawn_teammate", {"name": "alice", "role": "checker"})],
            )
        if "spawn_teammate" in calls:
            return Reply("alice will claim the tasks by herself.")
        calls = [
            ToolUse(
                "create_task",
                {
                    "subject": "run main.py",
                    "description": "Run `python main.py` and report what it prints.",
                },
            )
        ]
        if self.with_verify_task:
            verify = {"command": "python main.py", "expected_stdout_file": "expected.txt"}
            calls.append(
                ToolUse(
                    "create_task",
                    {
                        "subject": "check the output",
                        "description": "main.py must print what expected.txt holds.",
                        "blocked_by": [1],
                        "verify": verify,
                    },
                )
            )
        return Reply("I will put the work on the board.", calls)

    def teammate(self, name: str, body: dict[str, Any]) -> Reply:
        claim = claimed_task(body)
        assert claim is not None, f"{name} has no auto-claimed task in its conversation"
        task_id, token = claim
        fresh = f'<auto-claimed-task id="{task_id}"' in last_user_text(body)
        calls = dict(answered_calls(body))
        if "shell" in calls and calls["shell"].get("is_error"):
            note = (
                f"task #{task_id}: `python main.py` was refused "
                f"({result_text(calls['shell'])[:80]}). I keep the task; please allow it."
            )
            return Reply(
                "The command was refused; telling the lead.",
                [
                    ToolUse("send_message", {"to": "lead", "content": note}),
                    ToolUse("idle", {}),
                ],
            )
        if fresh and task_id == 1:
            return Reply("Running it.", [ToolUse("shell", {"command": "python main.py"})])
        if fresh or "shell" in calls:
            evidence = result_text(calls["shell"]) if "shell" in calls else "verify by host"
            return Reply(
                tool_calls=[
                    ToolUse(
                        "complete_task",
                        {
                            "task_id": task_id,
                            "claim_token": token,
                            "result": f"ran python main.py: {evidence.splitlines()[0]}",
                        },
                    )
                ]
            )
        if "complete_task" in calls:
            return Reply("Done; going idle.", [ToolUse("idle", {})])
        raise AssertionError(f"{name}: unexpected request, last calls {sorted(calls)}")


def cli_env(base_url: str, api_key: str = "test", extra: Mapping[str, str] = ()) -> dict:
    """The environment a user with a local Anthropic-compatible server would have."""
    drop = ("ANTHROPIC_", "AGENT_CLI_MODEL", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith(drop)}
    env.update(
        {
            "ANTHROPIC_BASE_URL": base_url,
            "ANTHROPIC_API_KEY": api_key,
            "NO_PROXY": "127.0.0.1,localhost",
            "PYTHONUNBUFFERED": "1",
        }
    )
    env.update(dict(extra))
    return env


# How long a test waits for a CLI process before it calls it hung. Only a guard: on a
# machine loaded to ~10 a start to the first teammate request took 15-50 s here, so a
# verdict never waits on a shorter clock than this one.
HANG_S = 600.0


def wait_for_process_event(event: threading.Event, proc: Any, what: str) -> None:
    """Block until `event` is set, or fail as soon as `proc` (a Popen) ends without it:
    however slow the machine, only a process that ends or hangs fails here."""
    either = threading.Event()
    threading.Thread(target=lambda: (proc.wait(), either.set()), daemon=True).start()
    threading.Thread(target=lambda: (event.wait(), either.set()), daemon=True).start()
    either.wait(HANG_S)
    assert event.is_set(), f"{what}: never happened (exit code {proc.poll()})"


def cli_command() -> list[str]:
    """The installed `agent-cli` entry point next to this Python (else `python -m agent_cli`)."""
    script = Path(sys.executable).with_name("agent-cli")
    return [str(script)] if script.exists() else [sys.executable, "-m", "agent_cli"]


def make_project(workdir: Path, expected: str = "42") -> None:
    (workdir / "main.py").write_text(MAIN_PY, encoding="utf-8")
    (workdir / "expected.txt").write_text(expected + "\n", encoding="utf-8")


def requests_by(stub: Any, agent: str, teammates: tuple[str, ...] = ("alice",)) -> list[dict]:
    return [
        b
        for b in stub.requests
        if isinstance(b, dict) and b.get("messages") and agent_of(b, teammates) == agent
    ]


def usage_sent(stub: Any, agent: str, teammates: tuple[str, ...] = ("alice",)) -> dict[str, int]:
    """Token counts the stub reported in its successful replies to `agent`, summed."""
    total: dict[str, int] = {}
    for body, usage in stub.served:
        if agent_of(body, teammates) == agent:
            for k, v in usage.items():
                total[k] = total.get(k, 0) + v
    return total
