"""Snapshots of the user's main tree as commits, made without touching it.

Like `git stash create` plus untracked files: a copy of the repository's index in
`snapshot.index` in the host-private directory (GIT_INDEX_FILE), `git add -A` (untracked
files in, ignored files and agent-cli's own state out), `git write-tree`, `git commit-tree`.
Each snapshot's parents are HEAD and the previous snapshot (kept on
`refs/agent-cli/main-tree`), so the merge base of a task branch and a later snapshot is the
snapshot the task started from, uncommitted changes included. While the main tree has not
changed, `take()` returns the same commit.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from ..gitrepo import GitRepo
from ..locking import StateLock

REF = "refs/agent-cli/main-tree"
STATE_DIRS = (".agent-cli", ".tasks", ".team")


def excludes(prefix: str) -> list[str]:
    """Pathspecs keeping agent-cli's state (board, team, worktrees) out of every tree."""
    out = []
    for name in STATE_DIRS:
        out.append(f":(exclude){prefix}{name}")
        if prefix:
            out.append(f":(exclude){name}")
    return out


def add_all(repo: GitRepo, cwd: Path | None = None, env: dict[str, str] | None = None) -> None:
    """`git add -A` of the tree at `cwd`, agent-cli's state directories left out. (Only those
    that exist and are not ignored are named: git add fails on a pathspec naming an ignored
    path, and adding them first would race with the board's own temp files.)"""
    root = Path(cwd or repo.top)
    names = [f"{repo.prefix}{n}" for n in STATE_DIRS] + (list(STATE_DIRS) if repo.prefix else [])
    present = [n for n in names if os.path.lexists(root / n) and n != ".agent-cli"]
    if present:  # (.agent-cli/ is in .git/info/exclude)
        ignored = repo.run("check-ignore", "--", *present, cwd=cwd, env=env,
                           check=False).stdout.split("\n")
        present = [n for n in present if n not in ignored]
    repo.run("add", "-A", "--", ".", *(f":(exclude){n}" for n in present), cwd=cwd, env=env)


def is_state_path(path: str, prefix: str) -> bool:
    """True for a repository path inside agent-cli's state directories."""
    for base in ("", prefix) if prefix else ("",):
        rest = path[len(base):] if path.startswith(base) else None
        if rest is not None and rest.split("/", 1)[0] in STATE_DIRS:
            return True
    return False


class Snapshots:
    """Takes snapshots of the main working tree of `repo` (one at a time across processes)."""

    def __init__(self, repo: GitRepo, state_dir: Path) -> None:
        self.repo = repo
        self.state_dir = state_dir
        self.index = state_dir / "snapshot.index"
        self._lock = StateLock(state_dir / "snapshot.lock")

    def take(self) -> str:
        """The commit of the main tree as it is now (reused while nothing changed)."""
        with self._lock.held():
            tree = self._tree_now()
            head_commit, prev = self.repo.commits("HEAD", REF)
            head = head_commit[0] if head_commit else None
            if prev and prev[1] == tree and (head is None or head in prev[2]):
                return prev[0]
            parents = []
            for p in (head, prev[0] if prev else None):
                if p and p not in parents:
                    parents += [p]
            args = ["commit-tree", tree, "-m", "agent-cli: snapshot of the main tree"]
            for p in parents:
                args += ["-p", p]
            commit = self.repo.out(*args)
            self.repo.run("update-ref", REF, commit, *([prev[0]] if prev else []))
            return commit

    def _tree_now(self) -> str:
        """write-tree of the working tree through the private index."""
        self.state_dir.mkdir(parents=True, exist_ok=True)
        lock = Path(str(self.index) + ".lock")
        if lock.exists():  # left by a killed snapshot; we hold the snapshot lock
            lock.unlink()
        src = self.repo.common_dir / "index"
        if src.exists():  # with its mtime, so git re-checks entries racily clean in it
            shutil.copy2(src, self.index)
        elif self.index.exists():
            os.unlink(self.index)
        env = {"GIT_INDEX_FILE": str(self.index)}
        add_all(self.repo, env=env)
        return self.repo.out("write-tree", env=env)


def tree_of_dir(repo: GitRepo, worktree: Path, index: Path) -> str:
    """The tree of a worktree's files as they are now (uncommitted and untracked included),
    through a throw-away index: the worktree's own index is left as it is."""
    real = repo.out("rev-parse", "--git-path", "index", cwd=worktree)
    src = Path(real) if os.path.isabs(real) else worktree / real
    if src.exists():  # (copy2: the mtime too, see Snapshots._tree_now)
        shutil.copy2(src, index)
    env = {"GIT_INDEX_FILE": str(index)}
    try:
        add_all(repo, worktree, env)
        return repo.out("write-tree", cwd=worktree, env=env)
    finally:
        for p in (index, Path(str(index) + ".lock")):
            if p.exists():
                p.unlink()
