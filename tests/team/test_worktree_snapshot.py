"""A task's worktree starts from the main tree as the user sees it (uncommitted and untracked
files in, ignored ones out) without the user's tree or index changing; the same snapshot is
reused while nothing changed; landing refuses to write through a symlinked directory."""

from __future__ import annotations

import os

import pytest
from support.worktree import WAIT, git, git_repo

from agent_cli.gitrepo import GitError
from agent_cli.runtime import Runtime, RuntimeConfig


def _user_tree(workdir):
    git_repo(workdir, {".gitignore": "*.log\n", "app.py": "print(1)\n", "docs/a.md": "a\n"})
    (workdir / "app.py").write_text("print(2)  # uncommitted\n")
    (workdir / "new.py").write_text("# the user's new file\n")
    (workdir / "debug.log").write_text("ignored\n")
    git(workdir, "add", "new.py")  # staged, too
    return git(workdir, "status", "--porcelain"), git(workdir, "diff", "--cached")


def test_worktree_sees_uncommitted_and_untracked_files_not_ignored_ones(workdir):
    status, staged = _user_tree(workdir)
    (workdir / "later.txt").write_text("untracked, never added\n")
    rt = Runtime.open(workdir, RuntimeConfig())
    task = rt.board.claim(rt.board.create("look").id, "alice")
    status = git(workdir, "status", "--porcelain")
    note = rt.worktrees.prepare(task, "alice")
    wt = rt.worktrees.path(task.id)
    assert str(wt) in note
    assert (wt / "app.py").read_text() == "print(2)  # uncommitted\n"
    assert (wt / "new.py").read_text() == "# the user's new file\n"
    assert (wt / "later.txt").read_text() == "untracked, never added\n"
    assert not (wt / "debug.log").exists()
    assert not (wt / ".tasks").exists() and not (wt / ".team").exists()
    assert git(workdir, "status", "--porcelain") == status  # the user's tree and index
    assert git(workdir, "diff", "--cached") == staged
    assert git(workdir, "stash", "list") == ""
    ws = rt.worktrees.workspace_for("alice")
    assert ws is not None and ws.root == wt and ws.label == f"in task #{task.id}'s worktree"
    assert rt.worktrees.workspace_for("bob") is None  # holds nothing: the main tree


def test_snapshot_is_reused_while_the_main_tree_is_unchanged(workdir):
    _user_tree(workdir)
    rt = Runtime.open(workdir, RuntimeConfig())
    snaps = rt.worktrees.snapshots
    first = snaps.take()
    assert snaps.take() == first
    (workdir / "app.py").write_text("print(3)\n")
    second = snaps.take()
    assert second != first
    assert git(workdir, "merge-base", first, second).strip() == first  # a chain
    git(workdir, "commit", "-qam", "user commits")  # HEAD moves: a new snapshot on top
    third = snaps.take()
    assert third != second
    assert git(workdir, "rev-parse", f"{third}^1").strip() == git(workdir, "rev-parse",
                                                                  "HEAD").strip()


def test_empty_repository_without_commits(workdir):
    git(workdir, "init", "-q")
    (workdir / "a.txt").write_text("a\n")
    rt = Runtime.open(workdir, RuntimeConfig())
    task = rt.board.claim(rt.board.create("first").id, "alice")
    rt.worktrees.prepare(task, "alice")
    wt = rt.worktrees.path(task.id)
    assert (wt / "a.txt").read_text() == "a\n"
    (wt / "b.txt").write_text("b\n")
    landed = rt.worktrees.landing.land(task, "alice", task.claim_token, "ok")
    assert landed.files == ["b.txt"] and (workdir / "b.txt").read_text() == "b\n"


def test_landing_never_writes_through_a_symlinked_directory(workdir, tmp_path):
    git_repo(workdir, {"docs/a.md": "a\n"})
    outside = tmp_path / "outside"
    outside.mkdir()
    rt = Runtime.open(workdir, RuntimeConfig())
    task = rt.board.claim(rt.board.create("docs").id, "alice")
    rt.worktrees.prepare(task, "alice")
    (rt.worktrees.path(task.id) / "docs" / "new.md").write_text("new\n")

    def swap(step):  # after step 2's snapshot: the user (or an attacker) swaps in a link
        if step == "merge":
            os.rename(workdir / "docs", workdir / "docs-real")
            os.symlink(outside, workdir / "docs")

    rt.worktrees.landing.on_step = swap
    with pytest.raises(GitError, match="docs is a symlink"):
        rt.worktrees.landing.land(task, "alice", task.claim_token, "ok")
    assert list(outside.iterdir()) == []
    assert rt.board.get(task.id).status == "in_progress"
    assert not rt.worktrees.landing.journal.exists()


def test_a_file_the_task_deletes_is_deleted_and_a_new_directory_made(workdir):
    git_repo(workdir, {"old/x.txt": "x\n", "keep.txt": "k\n"})
    rt = Runtime.open(workdir, RuntimeConfig())
    task = rt.board.claim(rt.board.create("move").id, "alice")
    rt.worktrees.prepare(task, "alice")
    wt = rt.worktrees.path(task.id)
    os.unlink(wt / "old" / "x.txt")
    (wt / "new" / "deep").mkdir(parents=True)
    (wt / "new" / "deep" / "x.txt").write_text("x\n")
    (wt / "run.sh").write_text("echo hi\n")
    os.chmod(wt / "run.sh", 0o755)
    landed = rt.worktrees.landing.land(task, "alice", task.claim_token, "ok")
    assert sorted(landed.files) == ["new/deep/x.txt", "old/x.txt", "run.sh"]
    assert not (workdir / "old").exists()
    assert (workdir / "new" / "deep" / "x.txt").read_text() == "x\n"
    assert os.stat(workdir / "run.sh").st_mode & 0o111


def test_snapshot_rechecks_a_file_racily_clean_in_the_users_index(workdir):
    """The user stages a.txt, then rewrites it in place (same size) within the same second:
    the index's stat data still matches; only the index's own mtime tells git to look."""
    git_repo(workdir, {"a.txt": "old\n"})
    git(workdir, "config", "core.trustctime", "false")  # what differs: the content alone
    (workdir / "a.txt").write_text("new\n")
    debug = git(workdir, "ls-files", "--debug", "a.txt")
    sec, nsec = (int(x) for x in debug.split("mtime: ")[1].split()[0].split(":"))
    os.utime(workdir / "a.txt", ns=(sec * 10**9 + nsec, sec * 10**9 + nsec))
    os.utime(workdir / ".git" / "index", ns=(sec * 10**9, sec * 10**9))  # that same second
    rt = Runtime.open(workdir, RuntimeConfig())
    task = rt.board.claim(rt.board.create("look").id, "alice")
    rt.worktrees.prepare(task, "alice")
    assert (rt.worktrees.path(task.id) / "a.txt").read_text() == "new\n"


def test_a_new_worktrees_index_is_settled_and_an_early_edit_still_shows(workdir):
    """After its checkout's second, the worktree's index is rewritten (git stops re-reading
    every file as racily clean), and an in-place edit made before that is still a change."""
    git_repo(workdir, {f"f{i}.txt": f"{i:04d}\n" for i in range(40)})
    rt = Runtime.open(workdir, RuntimeConfig())
    task = rt.board.claim(rt.board.create("settle").id, "alice")
    rt.worktrees.prepare(task, "alice")
    wt = rt.worktrees.path(task.id)
    index = rt.worktrees.repo.index_path(wt)
    checked_out = os.stat(wt / "f0.txt").st_mtime
    with open(wt / "f1.txt", "r+") as fh:  # same size, in place: stat alone cannot tell
        fh.write("XXXX\n")
    assert rt.worktrees.wait_settled(task.id, WAIT)
    assert int(os.stat(index).st_mtime) > int(checked_out)
    assert git(wt, "status", "--porcelain") == " M f1.txt\n"
    landed = rt.worktrees.landing.land(task, "alice", task.claim_token, "ok")
    assert landed.files == ["f1.txt"] and (workdir / "f1.txt").read_text() == "XXXX\n"
