"""Benchmark of hooks and project memory: what they add to a tool call and to building an agent.

    python bench/hooks.py [--runs N] [--json]

call_ms_no_hooks       median time of one read_file call through ToolRunner, no hooks configured
call_ms_hooks_no_match the same with 20 PreToolUse/PostToolUse hooks whose matchers do not match
                       (the cost every call pays once hooks exist); `no_match_vs_floor_pct`
call_ms_one_hook       the same with one matching PreToolUse hook (`true`): one process spawn
hook_spawn_ms          call_ms_one_hook minus the floor: what a matching hook costs a call
memory_load_ms         load_memory on a 6-level repository with 3 files per level and imports
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

from agent_cli.agent.tool_calls import ToolRunner
from agent_cli.memory import load_memory
from agent_cli.models.base import ToolUseBlock
from agent_cli.permissions.hooks import HookRunner, HookSpec
from agent_cli.tools.base import ToolContext, ToolSet
from agent_cli.tools.workspace import workspace_tools


class NoAudit:
    def record(self, **fields) -> None:
        pass


def call_ms(workdir: Path, specs: list[HookSpec], runs: int) -> float:
    hooks = HookRunner(specs, workdir, lambda e: None, NoAudit(), "bench", lambda a: {})
    runner = ToolRunner("lead", ToolSet(workspace_tools()), None, lambda e: None,
                        lambda: ToolContext("lead", workdir), hooks)
    use = ToolUseBlock(id="toolu_1", name="read_file", input={"path": "notes.txt"})
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        runner.run_one(use)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def memory_ms(root: Path, runs: int) -> float:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    d = root
    for level in range(6):
        for name in ("AGENTS.md", "CLAUDE.md", "CLAUDE.local.md"):
            (d / name).write_text(f"level {level} {name}\n@extra.md\n" + "rule line\n" * 50)
        (d / "extra.md").write_text("imported\n")
        d = d / f"l{level}"
        d.mkdir()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        load_memory(d, None)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=200)
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        wd = Path(tmp)
        (wd / "notes.txt").write_text("hello\n")
        floor = call_ms(wd, [], args.runs)
        miss = [HookSpec(ev, "Bash|Write", "true", 60, "project")
                for ev in ("PreToolUse", "PostToolUse") for _ in range(10)]
        no_match = call_ms(wd, miss, args.runs)
        one = call_ms(wd, [HookSpec("PreToolUse", "Read", "true", 60, "project")],
                      max(10, args.runs // 10))
        (wd / "repo").mkdir()
        mem = memory_ms(wd / "repo", max(10, args.runs // 4))
    figures = {
        "call_ms_no_hooks": round(floor, 3),
        "call_ms_hooks_no_match": round(no_match, 3),
        "no_match_vs_floor_pct": round(100 * no_match / floor, 1) if floor else None,
        "call_ms_one_hook": round(one, 2),
        "hook_spawn_ms": round(one - floor, 2),
        "memory_load_ms": round(mem, 3),
    }
    if args.json:
        print(json.dumps(figures))
    else:
        for k, v in figures.items():
            print(f"{k:24} {v}")


if __name__ == "__main__":
    sys.exit(main())
