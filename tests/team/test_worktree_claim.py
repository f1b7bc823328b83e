"""A claim's worktree: the common case is one snapshot and one `git worktree add`; the
uncommon ones are found out when that add fails (the task's branch kept from an earlier
worktree, a worktree git still lists where a killed run left none, a directory in the way)."""

from __future__ import annotations

import shutil

from support.worktree import git, git_repo

from agent_cli.gitrepo import GitRepo
from agent_cli.runtime import Runtime, RuntimeConfig


def _claim(rt: Runtime, task_id: int, owner: str = "alice") -> str:
    return rt.worktrees.prepare(rt.board.claim(task_id, owner), owner)


def test_a_claim_runs_only_the_snapshot_and_the_add(workdir, monkeypatch):
    git_repo(workdir, {"f.txt": "main\n"})
    (workdir / "f.txt").write_text("the user's edit\n")
    rt = Runtime.open(workdir, RuntimeConfig())
    task = rt.board.create("one")
    calls: list[str] = []
    real_run = GitRepo.run
    monkeypatch.setattr(GitRepo, "run", lambda self, *a, **kw: (
        calls.append(a[0]), real_run(self, *a, **kw))[1])
    note = _claim(rt, task.id)
    assert "work in its worktree" in note
    assert "prune" not in calls and "rev-parse" not in calls
    assert calls.count("worktree") == 1
    path = rt.worktrees.path(task.id)
    assert (path / "f.txt").read_text() == "the user's edit\n"  # uncommitted change carried
    assert git(path, "rev-parse", "--abbrev-ref", "HEAD").strip() == "agent-cli/task-1"


def test_a_kept_branch_is_continued_with_its_work(workdir):
    git_repo(workdir, {"f.txt": "main\n"})
    rt = Runtime.open(workdir, RuntimeConfig())
    task = rt.board.create("one")
    _claim(rt, task.id)
    path = rt.worktrees.path(task.id)
    (path / "work.txt").write_text("earlier work\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "earlier work")
    kept = git(path, "rev-parse", "HEAD").strip()
    git(workdir, "worktree", "remove", "--force", str(path))  # the branch stays
    rt.board.release(task.id, "alice")
    _claim(rt, task.id, "bob")
    assert (path / "work.txt").read_text() == "earlier work\n"
    assert git(path, "rev-parse", "HEAD").strip() == kept
    assert rt.worktrees.state.get(task.id)["base"] == kept


def test_a_worktree_git_still_lists_without_its_directory(workdir):
    """A run killed during `git worktree add` can leave git's record of a worktree whose
    directory is gone: the add fails, git forgets the record, the add is made again."""
    git_repo(workdir, {"f.txt": "main\n"})
    rt = Runtime.open(workdir, RuntimeConfig())
    task = rt.board.create("one")
    path = rt.worktrees.path(task.id)
    git(workdir, "worktree", "add", "-q", "--detach", str(path), "HEAD")
    shutil.rmtree(path)
    note = _claim(rt, task.id)
    assert "work in its worktree" in note, note
    assert (path / "f.txt").read_text() == "main\n"
    assert str(path) in git(workdir, "worktree", "list")


def test_a_directory_in_the_way_is_replaced(workdir):
    git_repo(workdir, {"f.txt": "main\n"})
    rt = Runtime.open(workdir, RuntimeConfig())
    task = rt.board.create("one")
    path = rt.worktrees.path(task.id)
    path.mkdir(parents=True)
    (path / "half-written.txt").write_text("from a killed checkout\n")
    assert "work in its worktree" in _claim(rt, task.id)
    assert not (path / "half-written.txt").exists()
    assert (path / "f.txt").read_text() == "main\n"
