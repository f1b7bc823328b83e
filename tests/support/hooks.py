"""Shared helpers for the hook tests: a real hook script (logs its stdin JSON, prints what it
is told, exits with the code it is told) and settings files that configure it."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

from agent_cli.permissions.layers import SettingsLayers
from agent_cli.permissions.project_trust import TRUST_KEY

HOOK_SOURCE = '''
import json, os, sys
args = json.loads(sys.argv[1])
data = sys.stdin.read()
with open(args["log"], "a", encoding="utf-8") as fh:
    fh.write(data.replace("\\n", " ") + "\\n")
flag = args.get("pass_if")
if flag and os.path.exists(flag):
    sys.exit(0)
if args.get("stdout") is not None:
    sys.stdout.write(args["stdout"] if isinstance(args["stdout"], str)
                     else json.dumps(args["stdout"]))
if args.get("stderr"):
    sys.stderr.write(args["stderr"])
sys.exit(args.get("code", 0))
'''


class Hook:
    """One configured hook command and the log of the JSON it received."""

    def __init__(self, tmp: Path, name: str, code: int = 0, stdout: Any = None,
                 stderr: str = "", pass_if: Path | None = None) -> None:
        script = tmp / "hook.py"
        if not script.exists():
            script.write_text(HOOK_SOURCE, encoding="utf-8")
        self.log = tmp / f"{name}.log"
        spec = {"log": str(self.log), "code": code, "stdout": stdout, "stderr": stderr,
                "pass_if": str(pass_if) if pass_if else None}
        self.command = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} " \
                       f"{shlex.quote(json.dumps(spec))}"

    def calls(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text(encoding="utf-8").splitlines()]


def configure(workdir: Path, hooks: dict[str, list[tuple[str, Hook]]],
              layer: str = "settings.json", timeout: float | None = None,
              extra: dict | None = None) -> None:
    """Write `{"hooks": {event: [{"matcher": m, "hooks": [cmd]}]}}` to a settings layer."""
    out: dict[str, Any] = {}
    for event, groups in hooks.items():
        out[event] = []
        for matcher, hook in groups:
            entry: dict[str, Any] = {"type": "command", "command": hook.command}
            if timeout is not None:
                entry["timeout"] = timeout
            out[event].append({"matcher": matcher, "hooks": [entry]})
    path = workdir / ".agent-cli" / layer
    path.parent.mkdir(parents=True, exist_ok=True)
    keep = {}
    if layer == "settings.local.json" and path.exists():  # keep a trust answer already there
        keep = {k: v for k, v in json.loads(path.read_text()).items() if k == TRUST_KEY}
    path.write_text(json.dumps({"hooks": out, **(extra or {}), **keep}), encoding="utf-8")
    if layer == "settings.json":  # the project's hooks: as if the human had said yes once
        trust_project_hooks(workdir)


def trust_project(workdir: Path) -> None:
    """Record the human's yes to the repository's current widening settings (allow rules,
    defaultMode, hooks), as the REPL's start-up question does."""
    layers = SettingsLayers(workdir)
    held = layers.held_parts()
    if held is not None:
        layers.trust(held)


trust_project_hooks = trust_project  # the hooks-only name some tests still use
