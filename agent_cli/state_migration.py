"""Old host-private state moved once; host-private state a repository carries, reported.

Before private_state.py the landing journal, the worktree records and the trust answers
lived under the workdir's `.agent-cli/`, and only a task file's `verify.set_by` said who
typed a verify. `check(workdir)` runs at every start (REPL, headless, the task commands):
- once per workdir (`migrated.json` in the private directory): what this user's own
  agent-cli wrote there — files git does not track and this user owns — moves into the
  private state (trust keys out of settings.local.json, the journal and records moved, the
  verify of a `set_by: cli` task file recorded as typed);
- every run: such state found in a file git tracks or another user owns (or anywhere in
  the workdir after the move) is not read; one line per file says so.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .errors import AgentCliError
from .fsutil import atomic_write_json, parse_json, read_state, utc_now
from .gitrepo import GitError, GitRepo
from .private_state import TRUST_FILE, TRUST_KEYS, PrivateStore

MARKER = "migrated.json"
OLD_FILES = {".agent-cli/landing.json": "landing.json",
             ".agent-cli/worktrees/state.json": "worktrees.json"}
LOCAL = ".agent-cli/settings.local.json"
PRIVATE_FILES = (TRUST_FILE, "verify_authors.json", "worktrees.json", "landing.json")
HUMAN = ("cli", "user")


def _tracked(workdir: Path) -> set[str]:
    """Workdir-relative paths git tracks under .agent-cli/ and .tasks/ (one git call), asked
    only when a file this module reads is there: else what git tracks changes nothing."""
    from .board.presence import may_hold_tasks

    if not may_hold_tasks(workdir / ".tasks") and not any(
            os.path.lexists(workdir / rel) for rel in (*OLD_FILES, LOCAL)):
        return set()
    repo = GitRepo.find(workdir)
    if repo is None:
        return set()
    try:
        out = repo.run("ls-files", "-z", "--", ".agent-cli", ".tasks", cwd=workdir,
                       check=False).stdout
    except GitError:
        return set()
    return {p for p in out.split("\0") if p}


def _own(path: Path) -> bool:
    try:
        return os.lstat(path).st_uid == os.geteuid()
    except OSError:
        return False


def _json(path: Path) -> dict[str, Any] | None:
    try:
        raw = read_state(path)
        data = parse_json(raw) if raw is not None else None
    except (AgentCliError, OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def check(workdir: Path, user: Path | None = None) -> list[str]:
    """Migrate once, then report what is not read (see the module docstring)."""
    workdir = Path(workdir)
    store = PrivateStore(workdir, user)
    tracked = _tracked(workdir)
    try:
        if not store.read(MARKER):
            _migrate(workdir, store, tracked)
            store.write(MARKER, {"at": utc_now()})
    except AgentCliError as exc:
        store.warn(f"old agent-cli state not moved: {exc}")
    for name in PRIVATE_FILES:  # a file there that is not this user's: set aside, said now
        try:
            store.read(name)
        except AgentCliError as exc:
            store.warn(str(exc))
    return [*store.warnings, *_report(workdir, tracked)]


def _migrate(workdir: Path, store: PrivateStore, tracked: set[str]) -> None:
    for rel, name in OLD_FILES.items():
        path = workdir / rel
        data = _json(path) if rel not in tracked and _own(path) else None
        if data is not None and not store.read(name):
            store.write(name, data)
            path.unlink()
    _migrate_trust(workdir / LOCAL, store, LOCAL in tracked)
    _migrate_verify(workdir, tracked)


def _migrate_trust(path: Path, store: PrivateStore, is_tracked: bool) -> None:
    local = _json(path) if not is_tracked and _own(path) else None
    keys = [k for k in TRUST_KEYS if local is not None and k in local]
    if not keys:
        return
    assert local is not None
    moved = {("trustedProjectSettings" if k == "trustedProjectHooks" else k): local[k]
             for k in keys}

    def mutate(data: dict[str, Any]) -> bool:
        for key, value in moved.items():
            data.setdefault(key, value)
        return True

    store.update(TRUST_FILE, mutate)
    atomic_write_json(path, {k: v for k, v in local.items() if k not in keys})


def _migrate_verify(workdir: Path, tracked: set[str]) -> None:
    tasks = workdir / ".tasks"
    try:
        names = [n for n in os.listdir(tasks) if n.startswith("task_") and n.endswith(".json")]
    except OSError:
        return
    if not names:  # a fresh workdir: no board models to build for nothing
        return
    from .board.verify_authors import VerifyAuthors

    authors = VerifyAuthors(workdir)
    for name in names:
        path = tasks / name
        data = _json(path) if f".tasks/{name}" not in tracked and _own(path) else None
        verify = data.get("verify") if data is not None else None
        tid = data.get("id") if data is not None else None
        if isinstance(verify, dict) and verify.get("set_by") in HUMAN and isinstance(tid, int) \
                and isinstance(verify.get("command"), str):
            authors.record(tid, verify, verify["set_by"])


def _report(workdir: Path, tracked: set[str]) -> list[str]:
    lines = []
    for rel in OLD_FILES:
        if os.path.lexists(workdir / rel):
            lines.append(f"{rel}: not read (agent-cli keeps landing state in the git "
                         "directory; a file in the workdir, maybe from the repository, "
                         "counts for nothing)")
    local = _json(workdir / LOCAL)
    keys = [k for k in TRUST_KEYS if local is not None and k in local]
    if keys:
        whose = "tracked by git" if LOCAL in tracked else "in the workdir"
        lines.append(f"{LOCAL}: {', '.join(keys)} {whose}: counts for nothing (trust answers "
                     "live in agent-cli's private state; you are asked instead)")
    carried = sorted(_verify_ids(workdir, tracked))
    if carried:
        shown = ", ".join(f"#{i}" for i in carried[:10]) + (" ..." if len(carried) > 10 else "")
        lines.append(f".tasks/: task {shown}: verify commands in files git tracks are the "
                     "repository's; they ask before they run (headless: refused)")
    return lines


def _verify_ids(workdir: Path, tracked: set[str]) -> list[int]:
    out = []
    for rel in tracked:
        if rel.startswith(".tasks/task_") and rel.endswith(".json"):
            data = _json(workdir / rel)
            if data is not None and isinstance(data.get("verify"), dict) \
                    and isinstance(data.get("id"), int):
                out.append(data["id"])
    return out

