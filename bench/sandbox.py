"""Benchmark of the OS sandbox: what a command pays, and what the human is spared.

    python bench/sandbox.py [--json] [--runs N]

sandbox_overhead_ms   one `true` through the shell runner, sandboxed (bubblewrap, the lead's
                      boundary) minus unsandboxed, medians of N runs each (default 50); the
                      two medians and their ratio are printed too. Target: <= 25 ms or <= 2x,
                      whichever is larger (`target_holds` says which held).
                      `*_cpu_ms`: CPU time of the child processes per command (steadier
                      than wall clock on a loaded machine; `load_avg_1m` says how loaded).
prompts_per_task      approval prompts a human answered per completed task in the README's demo
                      scenarios 1, 2, 3 and 5, run in-process with the offline demo model and a
                      human thread answering "1" to everything: sandbox off vs on (auto-allow).
                      Shell prompts are counted apart (`shell_prompts_per_task`): file writes
                      by write_file still ask with the sandbox on (they are not shell
                      commands); the target is 0 shell prompts with it on.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

SCENARIOS = {
    "1": "Create 3 tasks on the board, then spawn alice and bob. Watch them auto-claim.",
    "2": "Spawn a coder teammate and let it find work from the task board itself.",
    "3": "Create tasks with dependencies. Watch teammates respect the blocked order.",
    "5": "Check whether main.py's output matches expected.txt",
}


def _median_ms(run, runs: int) -> tuple[float, float]:
    """(median wall-clock ms, mean CPU ms of the child processes) of `runs` calls."""
    import resource

    times = []
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    for _ in range(runs):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1000)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000 / runs
    return statistics.median(times), cpu


def overhead(runs: int) -> dict[str, Any]:
    from agent_cli.sandbox.config import SandboxSettings
    from agent_cli.sandbox.manager import Sandbox
    from agent_cli.tools.shell import run_process

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        box = Sandbox(SandboxSettings(enabled=True), work)
        if not box.availability.ok:
            return {"sandbox_overhead_ms": None, "why": box.availability.why}
        cancel = threading.Event()

        def plain() -> None:
            run_process("true", work, 30, cancel)

        def boxed() -> None:
            wrapped = box.wrap("true", work, work)
            run_process("true", work, 30, cancel, argv=wrapped.argv, env=wrapped.env)

        plain(), boxed()  # warm caches
        (off, off_cpu), (on, on_cpu) = _median_ms(plain, runs), _median_ms(boxed, runs)
    extra = on - off
    ratio = on / off if off else float("inf")
    holds = [name for name, ok in (("<= 25 ms", extra <= 25), ("<= 2x", ratio <= 2)) if ok]
    with open("/proc/loadavg", encoding="ascii") as fh:
        load = float(fh.read().split()[0])
    return {"unsandboxed_ms": round(off, 2), "sandboxed_ms": round(on, 2),
            "sandbox_overhead_ms": round(extra, 2), "ratio": round(ratio, 2),
            "target_holds": " and ".join(holds) or "neither",
            "unsandboxed_cpu_ms": round(off_cpu, 2), "sandboxed_cpu_ms": round(on_cpu, 2),
            "load_avg_1m": load}


class _Human:
    """Answers every approval with "1" (allow once) and counts the questions."""

    def __init__(self, rt: Any) -> None:
        from agent_cli.permissions.broker import ApprovalAnswer

        self.rt, self.answer = rt, ApprovalAnswer("allow_once")
        self.asked: list[str] = []
        self._stop = threading.Event()
        rt.broker.attach_ui()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            req = self.rt.broker.next_request(timeout=0.05)
            if req is not None:
                self.asked.append(req.tool)
                self.rt.broker.answer(req.id, self.answer)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)


def scenario(prompt: str, sandbox: bool) -> tuple[int, int, int]:
    """(prompts, shell prompts, completed tasks) for one demo prompt in a fresh workdir."""
    from agent_cli.app import open_runtime
    from agent_cli.runtime import RuntimeConfig

    with tempfile.TemporaryDirectory() as tmp:
        rt = open_runtime(Path(tmp), RuntimeConfig(model="demo", sandbox=sandbox,
                                                   idle_timeout_s=0.0))
        human = _Human(rt)
        try:
            lead = rt.team.make_lead()
            lead.run_turn(prompt)
            rt.team.wait_quiet(60)
            for _ in range(3):
                block = rt.team.lead_inbox_block()
                if block is None:
                    break
                lead.run_turn([block])
                rt.team.wait_quiet(60)
            done = sum(t.status == "completed" for t in rt.board.snapshot().tasks)
        finally:
            human.stop()
            rt.broker.detach_ui()
            rt.close(5)
    return len(human.asked), sum(tool == "shell" for tool in human.asked), done


def prompts(sandbox: bool) -> dict[str, Any]:
    asked = shell = done = 0
    for prompt in SCENARIOS.values():
        a, s, d = scenario(prompt, sandbox)
        asked, shell, done = asked + a, shell + s, done + d
    def per(n: int) -> float | None:
        return round(n / done, 2) if done else None

    return {"prompts_per_task": per(asked), "shell_prompts_per_task": per(shell),
            "prompts": asked, "completed_tasks": done}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    figures: dict[str, Any] = overhead(args.runs)
    figures["scenarios"] = ",".join(SCENARIOS)
    for label, on in (("sandbox_off", False), ("sandbox_on", True)):
        for key, value in prompts(on).items():
            figures[f"{key}[{label}]"] = value
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        for key, value in figures.items():
            print(f"{key:40} {value}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    raise SystemExit(main())
