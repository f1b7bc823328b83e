"""Benchmark of terminal safety: what making text visible costs.

    python bench/safetext.py [--json]

visible_us_plain_line     safetext.visible on an 80-character ASCII line (the common case,
                          a fast path), median of batches, microseconds.
visible_us_hostile_line   the same on an 80-character line with escapes, bidi and a lone
                          surrogate in it.
visible_mb_s_mixed        throughput on 1 MB of mixed text (ASCII, Chinese, emoji, a few
                          control characters), MB/s.
render_ms_table_plain     a 200-row rich table rendered by a plain rich Console (median).
render_ms_table_safe      the same through ui/style.make_console (a SafeConsole: every
                          segment through visible); the difference is the last layer's cost.
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from agent_cli.safetext import visible  # noqa: E402
from agent_cli.ui.style import make_console  # noqa: E402

PLAIN = "fix the parser so that nested lists keep their indentation in the output (#42)"[:80]
HOSTILE = ("\x1b[2K\x1b[1G│ lead wants to run `ls`\u202e\x9b31m\ud800 tail of it" * 2)[:80]


def per_call_us(text: str, n: int = 20000, batches: int = 7) -> float:
    times = []
    for _ in range(batches):
        start = time.perf_counter()
        for _ in range(n):
            visible(text)
        times.append((time.perf_counter() - start) / n * 1e6)
    return round(statistics.median(times), 3)


def mixed_mb_s() -> float:
    chunk = "plain words, 中文字符, emoji 👩‍💻, tab\tand a \x1b[31m colour\n"
    text = chunk * (1_000_000 // len(chunk.encode()))
    mb = len(text.encode("utf-8", "surrogatepass")) / 1e6
    start = time.perf_counter()
    visible(text)
    return round(mb / (time.perf_counter() - start), 1)


def render_ms(console_of, rows: int = 200, runs: int = 7) -> float:
    table = Table("#", "subject", "owner", "result")
    for i in range(rows):
        table.add_row(str(i), f"task number {i} with a subject", "alice", "done: 3 files")
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        console_of(io.StringIO()).print(table)
        times.append((time.perf_counter() - start) * 1e3)
    return round(statistics.median(times), 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = {
        "visible_us_plain_line": per_call_us(PLAIN),
        "visible_us_hostile_line": per_call_us(HOSTILE),
        "visible_mb_s_mixed": mixed_mb_s(),
        "render_ms_table_plain": render_ms(lambda f: Console(file=f, width=120, color_system=None,
                                                             highlight=False)),
        "render_ms_table_safe": render_ms(lambda f: make_console(f, 120, False)),
    }
    if args.json:
        print(json.dumps(figures))
    else:
        for name, value in figures.items():
            print(f"{name:<26}{value}")


if __name__ == "__main__":
    main()
