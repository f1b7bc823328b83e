"""What task worktrees and branches exist, which are stale, which hold unlanded work.

`inventory(wt)` joins git's own lists (`git worktree list`, `refs/heads/agent-cli/task-*`)
with the board and the worktree records. Stale: the task is completed or gone (its worktree
was left behind) or its branch already landed. Unlanded work: uncommitted files in the
worktree, or branch commits that never reached the main tree. `diff_of(wt, id)` is what
`agent-cli tasks diff ID` prints.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import CorruptFile, NotFound
from .snapshot import REF, excludes, tree_of_dir

if TYPE_CHECKING:
    from .worktrees import Worktrees

_TASK_DIR = re.compile(r"^task-(\d+)$")


@dataclass
class Entry:
    task_id: int
    kind: str  # "worktree" | "branch"
    name: str  # the worktree's path (workdir-relative) or the branch
    stale: bool
    unlanded: bool
    why: str


def _task_status(wt: Worktrees, task_id: int) -> str | None:
    try:
        return wt.board.get(task_id).status
    except (NotFound, CorruptFile):
        return None


def _unlanded(wt: Worktrees, task_id: int, path: Path | None) -> bool:
    assert wt.repo is not None
    rec = wt.state.get(task_id) or {}
    if rec.get("status") == "landed":
        return False
    if path is not None and path.exists():
        dirty = wt.repo.run("status", "--porcelain", cwd=path, check=False).stdout.strip()
        if dirty:
            return True
    branch = wt.branch(task_id)
    since = REF if wt.repo.rev(REF) else "HEAD"
    count = wt.repo.run("rev-list", "--count", f"{since}..{branch}", check=False).stdout.strip()
    return count not in ("", "0")


def inventory(wt: Worktrees) -> list[Entry]:
    """Every task worktree and branch, with what a cleanup may do about it."""
    if not wt.enabled or wt.repo is None:
        return []
    out: list[Entry] = []
    dirs = sorted(int(m.group(1)) for p in (wt.dir.iterdir() if wt.dir.is_dir() else [])
                  if p.is_dir() and (m := _TASK_DIR.match(p.name)))
    for tid in dirs:
        path = wt.path(tid)
        shown = path.relative_to(wt.workdir).as_posix()
        status = _task_status(wt, tid)
        unlanded = _unlanded(wt, tid, path)
        if not (path / ".git").is_file():
            out.append(Entry(tid, "worktree", shown, True, False, "never finished (no .git)"))
        elif status is None:
            out.append(Entry(tid, "worktree", shown, True, unlanded,
                             "its task is not on the board"))
        elif status == "completed":
            out.append(Entry(tid, "worktree", shown, True, unlanded, "its task is completed"))
        elif status == "pending":
            out.append(Entry(tid, "worktree", shown, False, unlanded,
                             "released: the next claimer continues in it"))
        else:
            out.append(Entry(tid, "worktree", shown, False, unlanded, "in progress"))
    refs = wt.repo.out("for-each-ref", "--format=%(refname:short)", "refs/heads/agent-cli/")
    for branch in refs.splitlines():
        m = re.match(r"^agent-cli/task-(\d+)$", branch)
        if not m or int(m.group(1)) in dirs:
            continue
        tid = int(m.group(1))
        rec = wt.state.get(tid) or {}
        if rec.get("status") == "landed":
            out.append(Entry(tid, "branch", branch, True, False,
                             "landed (kept for `agent-cli tasks diff`)"))
            continue
        status = _task_status(wt, tid)
        unlanded = _unlanded(wt, tid, None)
        gone = status in (None, "completed")
        why = "its task is not on the board" if status is None else (
            "its task is completed" if gone else f"task is {status}; no worktree")
        out.append(Entry(tid, "branch", branch, gone, unlanded, why))
    return out


def diff_of(wt: Worktrees, task_id: int) -> str:
    """The task's change as a patch: what landed, or what its worktree holds now."""
    if not wt.enabled or wt.repo is None:
        raise NotFound("worktrees are not in use here (not a git repository, or off)")
    repo = wt.repo
    rec = wt.state.get(task_id) or {}
    branch = wt.branch(task_id)
    spec = ["--", ".", *excludes(repo.prefix)]
    if rec.get("status") == "landed" and rec.get("base") and rec.get("merged"):
        return repo.out("diff", rec["base"], rec["merged"], *spec)
    if not repo.rev(branch):
        raise NotFound(f"task #{task_id} has no worktree or branch")
    base = repo.out("merge-base", branch, REF) if repo.rev(REF) else branch
    path = wt.path(task_id)
    if (path / ".git").is_file():
        tree = tree_of_dir(repo, path, wt.private.path(f"diff-{task_id}.index"))
        return repo.out("diff", base, tree, *spec)
    return repo.out("diff", base, branch, *spec)
