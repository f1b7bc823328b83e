"""Custom command files as Claude Code writes them: found in the project and the home,
namespaced by folder, frontmatter read strictly, arguments filled in; odd files named."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.claude_user import write

from agent_cli.claude.commands import bang_commands, file_refs, load_commands
from agent_cli.claude.frontmatter import FrontmatterError, parse

REVIEW = """---
description: Review the code for a concern
argument-hint: [concern] [file]
model: claude-haiku-4-5
allowed-tools: Bash(git diff:*), Read, "Grep"
---
Review $2 for $1 problems. All: $ARGUMENTS
"""


def load(tmp_path: Path):
    return load_commands(tmp_path / "work", tmp_path / "home" / ".claude",
                         tmp_path / "home" / ".agent-cli")


def test_project_user_and_namespaced_commands_are_found(tmp_path: Path) -> None:
    write(tmp_path / "work/.claude/commands/review.md", REVIEW)
    write(tmp_path / "work/.claude/commands/frontend/component.md", "Make component $1.\n")
    write(tmp_path / "work/.agent-cli/commands/ship.md", "Ship it.\n")
    write(tmp_path / "home/.claude/commands/standup.md", "# Standup notes\nSummarise.\n")
    write(tmp_path / "home/.agent-cli/commands/mine.md", "Mine.\n")
    found = load(tmp_path)
    assert sorted(found.commands) == ["/frontend:component", "/mine", "/review", "/ship",
                                      "/standup"]
    review = found.get("/review")
    assert (review.origin, review.description, review.argument_hint, review.model) == (
        "project", "Review the code for a concern", "[concern] [file]", "claude-haiku-4-5")
    assert review.allowed_tools == ("Bash(git diff:*)", "Read", "Grep")
    assert found.get("/standup").description == "Standup notes"  # no frontmatter: 1st line
    assert found.get("/standup").origin == "user"
    assert found.problems == []


def test_arguments_fill_the_placeholders(tmp_path: Path) -> None:
    write(tmp_path / "work/.claude/commands/review.md", REVIEW)
    write(tmp_path / "work/.claude/commands/plain.md", "Fix the tests.\n")
    found = load(tmp_path)
    assert found.get("/review").expand('security "src/a b.py"') == (
        'Review src/a b.py for security problems. All: security "src/a b.py"')
    assert found.get("/review").expand("") == "Review  for  problems. All:"
    assert found.get("/review").expand("$2 $ARGUMENTS") == (
        "Review $ARGUMENTS for $2 problems. All: $2 $ARGUMENTS")
    assert found.get("/plain").expand("in tests/unit") == (
        "Fix the tests.\n\nARGUMENTS: in tests/unit")


def test_a_project_command_hides_the_users_of_the_same_name(tmp_path: Path) -> None:
    write(tmp_path / "work/.claude/commands/review.md", "Project review.\n")
    write(tmp_path / "home/.claude/commands/review.md", "My review.\n")
    found = load(tmp_path)
    assert found.get("/review").body == "Project review.\n"
    [line] = found.shadowed
    assert line.startswith("/review: ") and "is hidden by" in line


@pytest.mark.parametrize("header", [
    "---\ndescription: x\n  nested: y\n---\nbody\n",
    "---\ndescription: x\n- item\n---\nbody\n",
    "---\ndescription: x\nbody never closed\n",
    "---\ndescription: x\ndescription: y\n---\nbody\n",
])
def test_malformed_frontmatter_is_refused_with_its_line(header: str) -> None:
    with pytest.raises(FrontmatterError, match="line|never closed"):
        parse(header)


def test_odd_files_are_named_and_never_followed(tmp_path: Path) -> None:
    secret = write(tmp_path / "elsewhere/secret.md", "secret text\n")
    cmds = tmp_path / "work/.claude/commands"
    write(cmds / "ok.md", "fine\n")
    write(cmds / "bad.md", "---\nnot closed\n")
    os.symlink(secret, cmds / "linked.md")
    os.symlink(secret.parent, cmds / "linkdir")
    os.mkfifo(cmds / "fifo.md")
    write(cmds / "big.md", "x" * 70_000)
    write(cmds / "sp ace.md", "bad name\n")
    found = load(tmp_path)
    assert list(found.commands) == ["/ok"]
    problems = "\n".join(found.problems)
    for name in ("bad.md", "linked.md", "linkdir", "fifo.md", "big.md", "sp ace.md"):
        assert name in problems
    assert "secret text" not in repr(found)


def test_references_and_snippets_are_found() -> None:
    text = "See @src/app.py, and @docs/a.md. Mail a@b.c. Run !`git status` and `@not`."
    assert file_refs(text) == ["src/app.py", "docs/a.md"]
    assert bang_commands(text) == ["git status"]
