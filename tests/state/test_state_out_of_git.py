"""In a git repository a session keeps its state out of `git status` and `git add -A`: the
team's files (`.team/`: inboxes, transcripts, the audit log) always, the board (`.tasks/`)
unless the settings say `"commitBoard": true`. Only `.git/info/exclude` changes."""

from __future__ import annotations

import io
import json
from argparse import Namespace
from pathlib import Path

from support.team import make_runtime
from support.worktree import git, git_repo

from agent_cli.models.scripted import Reply, ScriptedModel
from agent_cli.ui.headless import run_headless


def headless_run(workdir: Path) -> None:
    rt = make_runtime(workdir, ScriptedModel({"lead": [Reply("ok")]}), session="new")
    try:
        rt.board.create("a task")
        rt.mail.send("lead", "alice", "hello")
        args = Namespace(prompt="go", wait=False, timeout=30, output_format="json")
        assert run_headless(rt, args, io.StringIO(), io.StringIO()) == 0
    finally:
        rt.close()


def untracked(workdir: Path) -> list[str]:
    return git(workdir, "status", "--porcelain", "--untracked-files=all").splitlines()


def test_a_session_leaves_git_status_and_add_all_clean(workdir: Path) -> None:
    git_repo(workdir, {"app.py": "print(1)\n", ".gitignore": "*.pyc\n"})
    headless_run(workdir)
    assert (workdir / ".team" / "inbox" / "alice.jsonl").exists()
    assert list((workdir / ".team" / "transcripts").rglob("*.jsonl"))
    assert list((workdir / ".tasks").glob("task_*.json"))
    assert untracked(workdir) == []
    git(workdir, "add", "-A")
    assert git(workdir, "diff", "--cached", "--name-only") == ""
    assert (workdir / ".gitignore").read_text() == "*.pyc\n"  # the user's file is not touched
    exclude = (workdir / ".git" / "info" / "exclude").read_text().splitlines()
    assert exclude.count("/.tasks/") == 1 and exclude.count("/.team/") == 1
    headless_run(workdir)  # a second session adds nothing
    assert (workdir / ".git" / "info" / "exclude").read_text().splitlines() == exclude


def test_commit_board_keeps_the_board_visible_to_git(workdir: Path) -> None:
    git_repo(workdir, {"app.py": "print(1)\n"})
    headless_run(workdir)  # the board was excluded first: the setting takes it back out
    settings = workdir / ".agent-cli" / "settings.json"
    settings.parent.mkdir(exist_ok=True)
    settings.write_text(json.dumps({"commitBoard": True}))
    headless_run(workdir)
    shown = untracked(workdir)
    assert "?? .tasks/task_1.json" in shown
    assert not [line for line in shown if ".team/" in line]
    assert "/.tasks/" not in (workdir / ".git" / "info" / "exclude").read_text().splitlines()


def test_a_workdir_below_the_repository_root_excludes_only_its_own_state(
        workdir: Path) -> None:
    git_repo(workdir, {"docs/.tasks/plan.md": "the project's own folder\n"})
    sub = workdir / "svc [1]"
    sub.mkdir()
    headless_run(sub)
    assert untracked(workdir) == []
    (workdir / "docs" / ".tasks" / "new.md").write_text("mine\n")
    assert untracked(workdir) == ["?? docs/.tasks/new.md"]
    exclude = (workdir / ".git" / "info" / "exclude").read_text().splitlines()
    assert "/svc \\[1]/.tasks/" in exclude and "/svc \\[1]/.team/" in exclude


def test_outside_a_repository_nothing_is_written(workdir: Path) -> None:
    headless_run(workdir)
    assert not (workdir / ".git").exists()
