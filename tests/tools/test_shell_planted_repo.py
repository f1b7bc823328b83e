"""A bare repository committed into a project is a trap for any `git` a command runs inside it:
its `config` names programs (here `diff.external`). Commands run by agents (the shell tool,
verify) have git open a bare repository only when it is named, so `cd evil.git && git diff`
runs nothing the repository planted; the same command without that setting shows the trap
is real."""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

from support.worktree import git

from agent_cli.tools.shell import run_process


def plant_bare_repo(workdir: Path, marker: Path) -> None:
    src = workdir.parent / "src"
    src.mkdir()
    git(src, "init", "-q", "-b", "main")
    for text in ("one\n", "two\n"):
        (src / "f.txt").write_text(text)
        git(src, "add", "f.txt")
        git(src, "commit", "-qm", text.strip())
    subprocess.run(["git", "clone", "-q", "--bare", str(src), str(workdir / "evil.git")],
                   check=True)
    script = workdir / "evil.git" / "diff.sh"
    script.write_text(f"#!/bin/sh\ntouch '{marker}'\n")
    script.chmod(0o755)
    git(workdir / "evil.git", "config", "diff.external", str(script))


def test_a_planted_bare_repository_runs_nothing(workdir: Path) -> None:
    marker = workdir.parent / "pwned"
    plant_bare_repo(workdir, marker)
    command = "cd evil.git && git diff HEAD~1 HEAD"

    result = run_process(command, workdir, 60, threading.Event())

    assert not marker.exists()
    assert result.code != 0  # git does not take the bare repository up
    subprocess.run(["bash", "-c", command], cwd=workdir, capture_output=True, timeout=60)
    assert marker.exists()  # the trap was real
