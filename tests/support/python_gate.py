"""PythonGate: a `python` first on PATH that says it was reached (a file), then waits (at
most 120 s) until the test opens the gate, so a kill can be driven from "a teammate is at
work in this command" instead of the machine's speed."""

from __future__ import annotations

import sys
from pathlib import Path


class PythonGate:
    def __init__(self, root: Path) -> None:
        self.bin = root / "gate-bin"
        self.bin.mkdir()
        self.reached = root / "gate-reached"
        self.opened = root / "gate-open"
        script = self.bin / "python"
        script.write_text(
            "#!/bin/sh\n"
            f"touch '{self.reached}'\n"
            "n=0\n"
            f"while [ ! -e '{self.opened}' ] && [ $n -lt 12000 ]; do\n"
            "  sleep 0.01; n=$((n+1))\ndone\n"
            f"exec '{sys.executable}' \"$@\"\n")
        script.chmod(0o755)

    def path_with(self, path: str) -> str:
        """`path` (a PATH value) with the gate first."""
        import os

        return f"{self.bin}{os.pathsep}{path}"

    def close(self) -> None:
        """Shut again, as never reached."""
        self.reached.unlink(missing_ok=True)
        self.opened.unlink(missing_ok=True)

    def open(self) -> None:
        self.opened.touch()
