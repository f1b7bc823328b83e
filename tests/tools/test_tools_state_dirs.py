"""glob and grep leave git's and agent-cli's own folders out (.git, .agent-cli, .tasks,
.team: the repository, worktrees, the board, inboxes, transcripts) unless asked for by path
or by a pattern that names one."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.worktree import git_repo

from agent_cli.board import TaskBoard
from agent_cli.tools.base import ToolContext
from agent_cli.tools.workspace import workspace_tools

WORD = "marmalade"


@pytest.fixture
def project(workdir: Path) -> Path:
    git_repo(workdir, {"src/app.py": f"# {WORD}\n", "README": "hello\n"})
    TaskBoard(workdir / ".tasks").create(f"spread the {WORD}")
    transcripts = workdir / ".team" / "transcripts"
    transcripts.mkdir(parents=True)
    (transcripts / "lead.jsonl").write_text(f'{{"text": "{WORD}"}}\n')
    tree = workdir / ".agent-cli" / "worktrees" / "task-1"
    tree.mkdir(parents=True)
    (tree / ".git").write_text("gitdir: elsewhere\n")  # a worktree's .git is a file
    (tree / "app.py").write_text(f"{WORD}\n")
    return workdir


def call(root: Path, name: str, **raw: str) -> str:
    tool = {t.name: t for t in workspace_tools()}[name]
    out = tool.run(tool.parse(raw), ToolContext(agent="alice", workdir=root))
    assert not out.is_error, out.content
    return out.content


def test_a_wildcard_glob_lists_the_project_only(project: Path) -> None:
    listed = call(project, "glob", pattern="**/*").splitlines()
    assert listed == ["README", "src/", "src/app.py"]
    assert call(project, "glob", pattern="*").splitlines() == ["README", "src/"]
    assert call(project, "glob", pattern=".*").startswith("no files match")


def test_grep_searches_the_project_and_not_the_transcripts(project: Path) -> None:
    assert call(project, "grep", pattern=WORD).splitlines() == [f"src/app.py:1: # {WORD}"]
    assert call(project, "grep", pattern="gitdir|ref:").startswith("no matches")


def test_asked_for_by_path_or_by_name_they_are_searched(project: Path) -> None:
    assert call(project, "grep", pattern=WORD, path=".team") == \
        f'.team/transcripts/lead.jsonl:1: {{"text": "{WORD}"}}'
    assert call(project, "glob", pattern=".tasks/*.json").splitlines() == [".tasks/task_1.json"]
    assert "task_1.json" in call(project, "grep", pattern=WORD, glob=".tasks/*")
    assert call(project, "glob", pattern="*", path=".agent-cli/worktrees/task-1") == \
        ".agent-cli/worktrees/task-1/app.py"
    assert call(project, "read_file", path=".team/transcripts/lead.jsonl").count(WORD) == 1


def test_a_teammates_worktree_hides_its_git_file(project: Path) -> None:
    tree = project / ".agent-cli" / "worktrees" / "task-1"
    assert call(tree, "glob", pattern="**/*") == "app.py"
