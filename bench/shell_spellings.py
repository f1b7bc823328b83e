"""How many of the shell spellings in tests/permissions/shell_spellings.toml the gate holds.

    python bench/shell_spellings.py [--json] [--family TEXT]

Each line is run for real (tests/support/spellings.py): in a fresh copy of a small git
repository with an untracked `victim`, through the real gate and shell tool, headless, under
deny (`Bash` + deny `Bash(rm *)`), ask (`Bash` + ask `Bash(rm *)`), allow (the family's
specifier rule alone) and bypass (bypassPermissions + deny `Bash(rm *)`). A line is held
when `victim` is intact and no `marker` appeared. Also run once with no gate at all: `bites`
counts the lines that then really reach `victim` (the table's calibration).

spellings      lines in the table
bites          of those, how many reach `victim` with no gate
held_<config>  lines held under that configuration
held_all       lines held under all four (target: every line)
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent / "tests"
sys.path.insert(0, str(TESTS))

from support.spellings import (  # noqa: E402
    CONFIGS,
    Gate,
    build_template,
    fixture,
    held,
    load,
    run_bare,
)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--family", default="", help="only families whose name contains TEXT")
    args = ap.parse_args()
    spellings = [s for s in load() if args.family in s.family]
    counts = {"spellings": len(spellings), "bites": 0, **{f"held_{c}": 0 for c in CONFIGS}}
    missed: list[str] = []
    all_held = 0
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        template = build_template(home / "template")
        gate = Gate(home / "runtimes")
        try:
            for n, spelling in enumerate(spellings):
                bare = fixture(template, home / f"bare{n}")
                run_bare(spelling.line, bare)
                counts["bites"] += not held(bare)
                every = True
                for config in CONFIGS:
                    _decision, ok = gate.run(config, spelling, fixture(template,
                                                                      home / f"{config}{n}"))
                    counts[f"held_{config}"] += ok
                    if not ok:
                        every = False
                        missed.append(f"{config}: {spelling.line}")
                all_held += every
        finally:
            gate.close()
    counts["held_all"] = all_held
    if args.json:
        print(json.dumps({**counts, "missed": missed}))
        return
    for key, value in counts.items():
        print(f"{key:<14}{value}")
    for line in missed:
        print(f"NOT HELD  {line}")


if __name__ == "__main__":
    main()
