"""Benchmark of what a task costs in model calls and tokens, through the real SDK against the
wire-level stub (tests/support/stub_server.py, prompt caching modelled), in a headless `--wait` run.

    python bench/cost.py [--json]

Scenarios:
  abc      the lead creates A, B and C (C blocked by A and B) and spawns alice and bob; a
           teammate's whole work on a task is one complete_task call.
  verify   the lead creates one task with a host verify (`python3 -c "print(42)"` must print
           42, allowed by a rule) and spawns alice, who completes it.
  abc_thinking   abc with extended thinking on for every agent (budget 2048): each reply
           thinks first, and the stub refuses any request whose thinking blocks were dropped
           or altered (target: 0 rejected requests).
  abc_big_reads  abc where each teammate reads a ~130k-character file before completing,
           against a model whose window (60k tokens, from the stub's model information)
           puts that read where the character estimate cannot tell the compaction
           threshold apart: the worst case for count_tokens (target: at most 1 per task).

Per scenario:
  requests_per_task          teammates' model requests per completed task (target 1.0 in abc:
                             a successful complete_task ends the turn, no closing-text call)
  lead_requests              the lead's model requests
  input/cached/cache_write/output_tokens_per_task   all agents' tokens per completed task, as
                             the stub counted them (cached = cache reads)
  prefix_cached_pct          of each agent's requests after its first, the share whose cache
                             read covers at least its system prompt + tools (target 100)
  thinking_tokens_per_task   thinking tokens (billed as output) per completed task
  requests                   all model requests of the run
  count_tokens_calls         count_tokens requests of the run (0 when no conversation grew
                             near the compaction threshold), and count_tokens_per_task
  model_info_requests        GET /v1/models/{id} (the context window; once per model)
  compactions                summary requests (auto-compaction; not counted as lead's)
  outcome                    the run's headless outcome (must be completed)
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import json
import sys
import tempfile
from argparse import Namespace
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parent.parent / "tests"
sys.path.insert(0, str(TESTS))

from support.e2e_claude import agent_of, system_text  # noqa: E402
from support.fallible import Crew, complete, results, wire_runtime  # noqa: E402
from support.stub_models import STUB_WINDOW, entry  # noqa: E402
from support.stub_server import STUB_MODEL, Reply, StubServer, ToolUse  # noqa: E402
from support.stub_usage import cache_blocks  # noqa: E402

from agent_cli.models.reply import estimate_tokens  # noqa: E402
from agent_cli.models.thinking import Thinking  # noqa: E402
from agent_cli.prompts import load_prompt  # noqa: E402

COMPACT_PROMPT = load_prompt("compact").strip()
SCENARIOS: dict[str, dict[str, Any]] = {
    "abc": {
        "teammates": ("alice", "bob"),
        "tasks": [{"subject": "A"}, {"subject": "B"}, {"subject": "C", "blocked_by": [1, 2]}],
        "allow": [],
    },
    "verify": {
        "teammates": ("alice",),
        "tasks": [{"subject": "print the answer", "verify": {
            "command": 'python3 -c "print(42)"', "expected_stdout": "42"}}],
        "allow": ['Bash(python3 -c "print(42)")'],
    },
    "abc_thinking": {
        "teammates": ("alice", "bob"),
        "tasks": [{"subject": "A"}, {"subject": "B"}, {"subject": "C", "blocked_by": [1, 2]}],
        "allow": [],
        "thinking": Thinking("enabled", 2048),
    },
    "abc_big_reads": {
        "teammates": ("alice", "bob"),
        "tasks": [{"subject": "A"}, {"subject": "B"}, {"subject": "C", "blocked_by": [1, 2]}],
        "allow": [],
        "big_reads": True,
        "window": 60_000,
    },
}


def read_then_complete(body: dict[str, Any], turn: int) -> Any:
    """A teammate that reads data.txt, then completes its task."""
    if "read_file" in results(body):
        return complete(body, "done")
    return Reply(tool_calls=[ToolUse("read_file", {"path": "data.txt", "limit": BIG_LINES})])
BIG_LINES = 1500  # x 80 characters: ~130k characters once read_file numbers the lines
THOUGHT = "I look at the request, the board and my tools, then decide the next step. " * 4


class Thinker:
    """Wraps a responder: every reply thinks first (when the request asks for thinking)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.tokens = 0

    def __call__(self, body: dict[str, Any]) -> Any:
        reply = self.inner(body)
        if not body.get("thinking") or not dataclasses.is_dataclass(reply) \
                or not hasattr(reply, "thinking"):
            return reply
        self.tokens += estimate_tokens(THOUGHT)
        return dataclasses.replace(reply, thinking=THOUGHT)


def run(name: str) -> dict[str, Any]:
    from agent_cli.ui.headless import run_headless

    spec = SCENARIOS[name]
    behave = read_then_complete if spec.get("big_reads") else \
        (lambda body, turn: complete(body, "done"))
    crew = Crew(dict.fromkeys(spec["teammates"], behave), tasks=spec["tasks"])
    thinker = Thinker(crew)
    models = [entry(STUB_MODEL, spec.get("window", STUB_WINDOW))]
    with tempfile.TemporaryDirectory() as tmp, StubServer(responder=thinker, model_cache=True,
                                                          models=models) as stub:
        if spec.get("big_reads"):
            (Path(tmp) / "data.txt").write_text(("y" * 79 + "\n") * BIG_LINES)
        rt = wire_runtime(Path(tmp), stub, allow=spec["allow"], thinking=spec.get("thinking"))
        out = io.StringIO()
        code = run_headless(rt, Namespace(prompt="go", wait=True, timeout=60,
                                          output_format="json"), out=out, err=io.StringIO())
        report = json.loads(out.getvalue())
        served = list(stub.served)
        rejected = len(stub.rejections)
        counted, infos = len(stub.counted), sum("/v1/models/" in g for g in stub.gets)
    figs = figures(report, code, served, spec["teammates"], rejected)
    figs["thinking_tokens_per_task"] = round(thinker.tokens / figs["tasks_completed"])
    figs["requests"] = len(served) + rejected
    figs["count_tokens_calls"] = counted
    figs["count_tokens_per_task"] = round(counted / figs["tasks_completed"], 2)
    figs["model_info_requests"] = infos
    return figs


def figures(report: dict, code: int, served: list, mates: tuple, rejected: int) -> dict:
    done = sum(t["status"] == "completed" for t in report["tasks"]) or 1
    per_agent: dict[str, list[tuple[dict, dict]]] = {}
    summaries = 0
    for body, usage in served:
        if system_text(body).strip() == COMPACT_PROMPT:  # a compaction's summary request
            summaries += 1
            continue
        per_agent.setdefault(agent_of(body, mates), []).append((body, usage))
    later = [(b, u) for reqs in per_agent.values() for b, u in reqs[1:]]
    covered = sum(u["cache_read_input_tokens"] >= prefix_tokens(b) for b, u in later)
    total = {k: sum(u[k] for _, u in served) for k in (
        "input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens",
        "output_tokens")}
    return {
        "outcome": report["outcome"],
        "exit_code": code,
        "tasks_completed": done,
        "requests_per_task": round(sum(len(per_agent.get(m, [])) for m in mates) / done, 2),
        "lead_requests": len(per_agent.get("lead", [])),
        "input_tokens_per_task": round(total["input_tokens"] / done),
        "cached_tokens_per_task": round(total["cache_read_input_tokens"] / done),
        "cache_write_tokens_per_task": round(total["cache_creation_input_tokens"] / done),
        "output_tokens_per_task": round(total["output_tokens"] / done),
        "prefix_cached_pct": round(100 * covered / len(later), 1) if later else 100.0,
        "rejected_requests": rejected,
        "compactions": summaries,
    }


def prefix_tokens(body: dict) -> int:
    """Tokens of the tools + system prompt, estimated the way the stub counts them."""
    n = len(body.get("tools") or []) + len(body.get("system") or [])
    return sum(max(1, len(json.dumps(b, sort_keys=True)) // 4)
               for b, _ in cache_blocks(body)[:n])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    results = {name: run(name) for name in SCENARIOS}
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for name, figs in results.items():
            print(f"{name}:")
            for key, value in figs.items():
                print(f"  {key:<28} {value}")
    ok = all(r["outcome"] == "completed" and r["rejected_requests"] == 0
             for r in results.values())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
