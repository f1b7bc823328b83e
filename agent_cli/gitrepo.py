"""The git command line for the host's own operations (snapshots, worktrees, landing).

`GitRepo.find(workdir)` returns the repository the workdir is in (itself or a parent), or
None. `run` calls git with a fixed environment: no hooks, no signing, no editor, no pager, no
terminal prompt, C locale, the GIT_* variables of an outer git (a hook, a rebase) removed, and
agent-cli as the committer. Host git commands never pass the permission gate: the host runs
them, not a model. A failing command raises GitError with git's own message.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .errors import AgentCliError

HOST_NAME = "agent-cli"
HOST_EMAIL = "agent-cli@localhost"
# An outer git's variables would point our commands at another index or repository.
_DROPPED = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
            "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_PREFIX", "GIT_COMMON_DIR")
_CONFIG = ("-c", "core.hooksPath=/dev/null", "-c", "commit.gpgSign=false",
           "-c", "advice.detachedHead=false", "-c", "core.quotePath=false",
           "-c", "merge.conflictStyle=merge")


class GitError(AgentCliError):
    """A git command failed; the message is git's stderr (first lines)."""


def host_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _DROPPED}
    env.update(
        GIT_TERMINAL_PROMPT="0", GIT_EDITOR="true", GIT_PAGER="cat", LC_ALL="C",
        GIT_MERGE_AUTOEDIT="no", GIT_COMMITTER_NAME=HOST_NAME, GIT_COMMITTER_EMAIL=HOST_EMAIL,
        GIT_AUTHOR_NAME=HOST_NAME, GIT_AUTHOR_EMAIL=HOST_EMAIL,
    )
    env.update(extra or {})
    return env


@dataclass(frozen=True)
class GitRepo:
    """A repository's main working tree (`top`), its common git dir, and where the workdir
    sits inside it (`prefix`: "" or "sub/dir/")."""

    top: Path
    common_dir: Path
    prefix: str = ""

    @classmethod
    def find(cls, workdir: Path) -> GitRepo | None:
        """The repository `workdir` belongs to, or None (not in one, no git, a bare repo)."""
        try:
            proc = subprocess.run(
                ["git", *_CONFIG, "rev-parse", "--show-toplevel", "--git-common-dir",
                 "--show-prefix"],
                cwd=workdir, env=host_env(), capture_output=True, text=True, timeout=30,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        lines = proc.stdout.split("\n")
        if proc.returncode != 0 or len(lines) < 3 or not lines[0]:
            return None
        top = Path(lines[0]).resolve()
        common = Path(lines[1])
        if not common.is_absolute():
            common = (Path(workdir) / common).resolve()
        return cls(top, common, lines[2])

    def run(
        self,
        *args: str,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        input: bytes | str | None = None,
        check: bool = True,
    ) -> subprocess.CompletedProcess[str]:
        """git ARGS in `cwd` (the main tree by default); GitError when it fails and `check`."""
        data = input.encode() if isinstance(input, str) else input
        try:
            proc = subprocess.run(
                ["git", *_CONFIG, *args], cwd=cwd or self.top, env=host_env(env),
                input=data, capture_output=True, timeout=600,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise GitError(f"git {args[0]} could not run: {exc}") from exc
        out = subprocess.CompletedProcess(
            proc.args, proc.returncode,
            proc.stdout.decode("utf-8", "surrogateescape"),
            proc.stderr.decode("utf-8", "replace"),
        )
        if check and proc.returncode != 0:
            raise GitError(f"git {args[0]} failed: {_first_lines(out.stderr or out.stdout)}")
        return out

    def out(self, *args: str, **kw) -> str:
        """stdout of `run`, stripped of its final newline."""
        return self.run(*args, **kw).stdout.rstrip("\n")

    def rev(self, name: str) -> str | None:
        """The object id `name` names, or None."""
        proc = self.run("rev-parse", "--verify", "-q", name + "^{commit}", check=False)
        return proc.stdout.strip() or None if proc.returncode == 0 else None

    def ensure_excluded(self, pattern: str) -> None:
        """Add `pattern` to .git/info/exclude once (the user's .gitignore is never touched)."""
        path = self.common_dir / "info" / "exclude"
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            text = ""
        if pattern in text.splitlines():
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        sep = "" if not text or text.endswith("\n") else "\n"
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"{sep}# agent-cli: task worktrees and session state\n{pattern}\n")


def _first_lines(text: str, n: int = 4) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return "; ".join(lines[:n]) or "(no message)"
