"""Benchmark of the Read rules: what they add to a read and to a search through the real gate.

    python bench/read_rules.py [--files N] [--runs N] [--json]

read_ms_no_rules   median time of one read_file call through ToolRunner + the gate, no Read rule
read_ms_rules      the same with 6 Read deny/ask rules (every spelling of the path resolved)
grep_ms_no_rules   median time of one grep over N files (default 2,000) with no Read rule
grep_ms_rules      the same with the 6 rules (each file met is matched against them)
grep_vs_floor_pct  what the rules add to the grep, in percent
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from agent_cli.agent.tool_calls import ToolRunner
from agent_cli.models.base import ToolUseBlock
from agent_cli.permissions.broker import ApprovalBroker
from agent_cli.permissions.gate import PermissionGate
from agent_cli.permissions.policy import PermissionPolicy
from agent_cli.tools.base import ToolContext, ToolSet
from agent_cli.tools.workspace import workspace_tools

RULES = ["Read(./.env)", "Read(**/*.pem)", "Read(/secrets/**)", "Read(~/.ssh/**)",
         "Read(//etc/shadow)"]
ASK = ["Read(./private/**)"]


class NoAudit:
    def record(self, **fields) -> None:
        pass


def median_ms(workdir: Path, deny: list[str], ask: list[str], use: ToolUseBlock,
              runs: int) -> float:
    policy = PermissionPolicy(workdir, deny=deny)
    for rule in ask:
        policy.add_rule(rule, "ask")
    gate = PermissionGate(policy, ApprovalBroker(), NoAudit())
    runner = ToolRunner("lead", ToolSet(workspace_tools()), gate, lambda e: None,
                        lambda: ToolContext("lead", workdir))
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        out = runner.run_one(use)
        times.append((time.perf_counter() - t0) * 1000)
        assert not out.is_error, out.content
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for i in range(a.files):
            d = root / f"pkg{i % 40}" / f"mod{i % 7}"
            d.mkdir(parents=True, exist_ok=True)
            (d / f"f{i}.py").write_text(f"def f{i}():\n    return {i}\n")
        (root / "notes.txt").write_text("notes\n" * 100)
        read = ToolUseBlock(id="t1", name="read_file", input={"path": "notes.txt"})
        grep = ToolUseBlock(id="t2", name="grep", input={"pattern": "return 1999$"})
        out = {
            "read_ms_no_rules": median_ms(root, [], [], read, a.runs),
            "read_ms_rules": median_ms(root, RULES, ASK, read, a.runs),
            "grep_ms_no_rules": median_ms(root, [], [], grep, max(3, a.runs // 5)),
            "grep_ms_rules": median_ms(root, RULES, ASK, grep, max(3, a.runs // 5)),
        }
    out = {k: round(v, 3) for k, v in out.items()}
    out["grep_vs_floor_pct"] = round(
        100 * (out["grep_ms_rules"] - out["grep_ms_no_rules"]) / out["grep_ms_no_rules"], 1)
    if a.json:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f"{k:20} {v}")


if __name__ == "__main__":
    main()
