"""Who typed a verify command, recorded where a repository cannot forge it.

A task file's `verify.set_by` is only what the file says: a cloned repository can commit a
`.tasks/task_1.json` claiming `"set_by": "cli"`. When `agent-cli tasks add --verify-command`
writes a task, the host also records the task id and the fingerprint of its verify (command
and expectations) in the host-private `verify_authors.json` (private_state.py). `unproved`
says why a verify is not provably the human's: its task file is tracked by git, or no record
matches it. Such a command is a repository's: it asks before it runs (headless: refused).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from ..fsutil import utc_now
from ..gitrepo import GitError, GitRepo
from ..private_state import PrivateStore
from .models import Task, Verify

VERIFY_FILE = "verify_authors.json"
HUMAN_WRITERS = frozenset({"cli", "user"})


def verify_fingerprint(verify: Verify | dict[str, Any]) -> str:
    """sha256 of the verify's command and expectations (not of who it claims wrote it)."""
    data = verify.model_dump() if isinstance(verify, Verify) else dict(verify)
    keep = {k: data.get(k) for k in ("command", "expected_stdout", "expected_stdout_file",
                                     "expected_exit_code")}
    if keep["expected_exit_code"] is None and "expected_exit_code" not in data:
        keep["expected_exit_code"] = 0  # the model's default
    text = json.dumps(keep, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def tracked(path: Path) -> bool:
    """True when git tracks `path` (one git call; False outside a repository)."""
    repo = GitRepo.find(path.parent)
    if repo is None:
        return False
    try:
        return repo.run("ls-files", "--error-unmatch", "--", path.name, cwd=path.parent,
                        check=False).returncode == 0
    except GitError:
        return False


class VerifyAuthors:
    """The private record of verify commands a person typed, for one workdir."""

    def __init__(self, workdir: Path, user: Path | None = None) -> None:
        self.workdir = Path(workdir)
        self.store = PrivateStore(self.workdir, user)

    def record(self, task_id: int, verify: Verify | dict[str, Any], writer: str) -> None:
        fp = verify_fingerprint(verify)

        def mutate(data: dict[str, Any]) -> bool:
            tasks = data.setdefault("tasks", {})
            if not isinstance(tasks, dict):
                data["tasks"] = tasks = {}
            tasks[str(task_id)] = {"fingerprint": fp, "set_by": writer, "at": utc_now()}
            return True

        self.store.update(VERIFY_FILE, mutate)

    def writer(self, task: Task) -> str | None:
        """Who typed the task's verify, per the private record (None: no matching record)."""
        if task.verify is None:
            return None
        tasks = self.store.read(VERIFY_FILE).get("tasks")
        rec = tasks.get(str(task.id)) if isinstance(tasks, dict) else None
        if not isinstance(rec, dict) or rec.get("fingerprint") != verify_fingerprint(task.verify):
            return None
        writer = rec.get("set_by")
        return writer if isinstance(writer, str) else None

    def unproved(self, task: Task, task_file: Path | None) -> str | None:
        """None when the task's verify is provably typed by this user here; else why not.
        `task_file`: the file the board keeps the task in (None: a database row, which no
        repository carries)."""
        assert task.verify is not None
        if task_file is not None and tracked(task_file):
            return (f"its task file {task_file.parent.name}/{task_file.name} is tracked by "
                    "git: the command came with the repository")
        if self.writer(task) not in HUMAN_WRITERS:
            claimed = task.verify.set_by or "an unknown writer"
            return (f"agent-cli on this machine has no record that you typed it (the task file "
                    f"says it was written by {claimed})")
        return None
