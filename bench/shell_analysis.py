"""Benchmark of the shell analysis every shell call passes before the gate decides.

    python bench/shell_analysis.py [--runs N] [--json]

parse_us_p50          tree-sitter-bash alone parsing the sample lines (the floor).
analyze_us_p50        analyze(): the walk, unwrapping and code read in turn, per line.
judge_us_p50          PermissionPolicy.judge_shell with `Bash` allowed and two deny rules.
analyze_vs_parse      analyze_us_p50 / parse_us_p50 (our own cost on top of the grammar).
long_line_ms          judge_shell on one 20,000-character compound line.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from agent_cli.permissions.policy import PermissionPolicy
from agent_cli.permissions.shell_analysis import analyze
from agent_cli.permissions.shell_model import parse_tree

LINES = [
    "git status",
    "ls -la",
    "npm run test -- --watch src/a.test.js",
    "git log --oneline | head -20",
    "timeout -s KILL 5 rm -rf build",
    "bash -lc 'cd sub && make test 2>&1 | tail -5'",
    "find . -name '*.pyc' -exec rm {} \\;",
    'for f in *.py; do python3 -m py_compile "$f" || echo "bad $f"; done',
    "git -C ../other push origin main",
    "cat <<'EOF' > notes.txt\nsome text\nEOF",
]


def _per_line_us(fn, runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        for line in LINES:
            fn(line)
        samples.append((time.perf_counter() - start) / len(LINES) * 1e6)
    return statistics.median(samples)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        policy = PermissionPolicy(Path(tmp), allow=["Bash"], deny=["Bash(rm *)",
                                                                    "Bash(git push *)"],
                                  settings_path=Path(tmp) / "settings.json")
        parse = _per_line_us(lambda line: parse_tree(line.encode()), args.runs)
        full = _per_line_us(analyze, args.runs)
        judge = _per_line_us(policy.judge_shell, args.runs)
        long_line = " && ".join(f"echo step{i} | grep -c x" for i in range(800))[:20_000]
        start = time.perf_counter()
        policy.judge_shell(long_line)
        long_ms = (time.perf_counter() - start) * 1000
    figures = {
        "parse_us_p50": round(parse, 1),
        "analyze_us_p50": round(full, 1),
        "judge_us_p50": round(judge, 1),
        "analyze_vs_parse": round(full / parse, 2),
        "long_line_ms": round(long_ms, 1),
    }
    if args.json:
        print(json.dumps(figures))
    else:
        for key, value in figures.items():
            print(f"{key:18} {value}")


if __name__ == "__main__":
    main()
