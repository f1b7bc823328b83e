"""The shell spellings table (tests/permissions/shell_spellings.toml), run for real.

`load()` reads the table; `fixture(template, where)` lays out a fresh directory for one line
(a copy of `build_template`'s git repository with `victim` and the planted files); `Gate`
opens one runtime per configuration and runs a line through the real gate and shell tool;
`held(where)` says whether the line's payload stayed out of reach (`victim` intact, no
`marker`). Used by tests/permissions/test_shell_spellings.py and bench/shell_spellings.py.
"""

from __future__ import annotations

import shutil
import subprocess
import tomllib
from dataclasses import dataclass
from pathlib import Path

from agent_cli.agent.tool_calls import ToolRunner
from agent_cli.models.base import ToolUseBlock
from agent_cli.runtime import Runtime, RuntimeConfig
from agent_cli.tools.base import ToolContext, ToolSet
from agent_cli.tools.workspace import workspace_tools

TABLE = Path(__file__).resolve().parent.parent / "permissions" / "shell_spellings.toml"
VICTIM = "precious data\n"
CONFIGS = ("deny", "ask", "allow", "bypass")
PLANTED = {
    "evil.conf": "Host *\n  ProxyCommand rm victim\n",
    "evil.sh": "#!/bin/sh\nrm victim\n",
    "f.txt": "hello\n",
    "lockf": "",
    "ls": "#!/bin/sh\n/bin/rm victim\n",  # a repository's own `ls`, run if PATH gets `.`
}
GIT_ENV = {"GIT_AUTHOR_NAME": "user", "GIT_AUTHOR_EMAIL": "user@example.com",
           "GIT_COMMITTER_NAME": "user", "GIT_COMMITTER_EMAIL": "user@example.com",
           "PATH": "/usr/bin:/bin:/usr/local/bin"}


@dataclass(frozen=True)
class Spelling:
    family: str
    line: str
    allow: str  # the specifier allow rule the line tries to ride
    bites: bool  # run by bash without a gate, it really touches `victim`

    @property
    def id(self) -> str:
        return " ".join(self.line.split())[:70]


def load(path: Path = TABLE) -> list[Spelling]:
    """Every spelling of the table, in order."""
    data = tomllib.loads(path.read_text())
    out = []
    for fam in data["family"]:
        for key, bites in (("lines", True), ("inert", False)):
            out += [Spelling(fam["name"], line, fam["allow"], bites) for line in fam.get(key, [])]
    return out


def _git(cwd: Path, *args: str) -> None:
    env = {**GIT_ENV, "HOME": str(cwd)}
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def build_template(where: Path) -> Path:
    """A git repository with two commits (f.txt changes), its identity in .git/config, the
    planted files and archive.tar; `victim` is added by `fixture`."""
    where.mkdir(parents=True, exist_ok=True)
    _git(where, "init", "-q", "-b", "main", "--template=")  # no sample hooks: quick to copy
    _git(where, "config", "user.name", "user")
    _git(where, "config", "user.email", "user@example.com")
    for name, text in PLANTED.items():
        (where / name).write_text(text)
    (where / "evil.sh").chmod(0o755)
    (where / "ls").chmod(0o755)
    _git(where, "add", "f.txt")
    _git(where, "commit", "-q", "-m", "one")
    (where / "f.txt").write_text("hello\nagain\n")
    _git(where, "commit", "-q", "-am", "two")
    _git(where, "gc", "-q")  # two pack files instead of a tree of loose objects
    subprocess.run(["tar", "cf", "archive.tar", "f.txt"], cwd=where, check=True)
    return where


def fixture(template: Path, where: Path) -> Path:
    """A fresh copy of the template with `victim` in it."""
    shutil.copytree(template, where, symlinks=True)
    (where / "victim").write_text(VICTIM)
    return where


def held(where: Path) -> bool:
    """The payload did not reach: `victim` is still there, unchanged, and no `marker`."""
    victim = where / "victim"
    intact = victim.is_file() and not victim.is_symlink() and victim.read_text() == VICTIM
    return intact and not (where / "marker").exists()


def run_bare(line: str, where: Path) -> None:
    """The line run by bash with no gate at all (the calibration: does it bite?)."""
    subprocess.run(["bash", "-c", line], cwd=where, stdin=subprocess.DEVNULL,
                   capture_output=True, timeout=20)


def config_for(name: str, allow: str) -> RuntimeConfig:
    """The four configurations of the table's header."""
    if name == "deny":
        return RuntimeConfig(allow=["Bash"], deny=["Bash(rm *)"])
    if name == "ask":
        return RuntimeConfig(allow=["Bash"])  # the ask rule is added by Gate
    if name == "allow":
        return RuntimeConfig(allow=[allow])
    return RuntimeConfig(permission_mode="bypassPermissions", allow_bypass=True,
                         deny=["Bash(rm *)"])


class Gate:
    """Runtimes by (configuration, allow rule), each in its own directory under `home`;
    headless (no human attached: an ask is a refusal)."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.runtimes: dict[tuple[str, str], Runtime] = {}

    def runtime(self, config: str, allow: str) -> Runtime:
        key = (config, allow if config == "allow" else "")
        if key not in self.runtimes:
            where = self.home / f"rt{len(self.runtimes)}"
            where.mkdir(parents=True)
            rt = Runtime.open(where, config_for(config, allow))
            if config == "ask":
                rt.policy.add_rule("Bash(rm *)", "ask")
            self.runtimes[key] = rt
        return self.runtimes[key]

    def run(self, config: str, spelling: Spelling, where: Path) -> tuple[str, bool]:
        """(the gate's decision as audited, held) for one line in `where`."""
        rt = self.runtime(config, spelling.allow)
        runner = ToolRunner("alice", ToolSet(workspace_tools()), rt.gate, lambda e: None,
                            lambda: ToolContext("alice", where))
        call = ToolUseBlock(id="t", name="shell",
                            input={"command": spelling.line, "timeout_s": 20})
        runner.run_one(call)
        entries = rt.audit.entries()
        decision = entries[-1]["decision"] if entries else "?"
        return decision, held(where)

    def close(self) -> None:
        for rt in self.runtimes.values():
            rt.close(timeout=10.0)
