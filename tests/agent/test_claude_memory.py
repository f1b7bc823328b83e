"""Project memory as Claude Code reads it: .claude/CLAUDE.md, the user's ~/.claude/CLAUDE.md,
@imports anywhere in the prose but never in code, and @~/ from the user's own files only."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from support.claude_user import write

from agent_cli.memory import load_memory


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


def test_claude_md_in_dot_claude_and_in_the_users_claude_dir(repo: Path, home: Path) -> None:
    write(repo / ".claude/CLAUDE.md", "Use pnpm, not npm.\n")
    write(home / ".claude/CLAUDE.md", "I prefer short commit messages.\n")
    mem = load_memory(repo, None, home / ".claude")
    block = mem.block()
    assert block.index("I prefer short commit messages.") < block.index("Use pnpm, not npm.")
    assert [f.path.name for f in mem.files] == ["CLAUDE.md", "CLAUDE.md"]
    assert mem.warnings == []


def test_imports_anywhere_in_the_prose_but_not_in_code(repo: Path, home: Path) -> None:
    write(repo / "docs/style.md", "STYLE-RULES")
    write(repo / "docs/git.md", "GIT-RULES")
    write(repo / "docs/spans.md", "SPAN-TEXT")
    write(repo / "docs/fenced.md", "FENCE-TEXT")
    write(repo / "CLAUDE.md", "See @docs/style.md for style, and @docs/git.md.\n"
          "Write `@docs/spans.md` literally. Mail me at dev@example.com, ask @alice.\n"
          "```\n@docs/fenced.md\n```\n")
    mem = load_memory(repo, None)
    block = mem.block()
    assert "STYLE-RULES" in block and "GIT-RULES" in block
    assert block.index("See @docs/style.md") < block.index("STYLE-RULES")
    assert "SPAN-TEXT" not in block and "FENCE-TEXT" not in block
    assert mem.warnings == []  # an address and a mention are not imports


def test_a_repository_file_cannot_import_from_the_home(repo: Path, home: Path) -> None:
    write(home / ".ssh/notes.md", "HOME-SECRET")
    write(repo / "CLAUDE.md", "Also read @~/.ssh/notes.md please.\n@~/.ssh/notes.md\n")
    mem = load_memory(repo, None, home / ".claude")
    assert "HOME-SECRET" not in mem.block()
    assert len(mem.warnings) == 2
    assert all("may not import from the home directory" in w for w in mem.warnings)


def test_the_users_own_file_imports_from_the_home(repo: Path, home: Path,
                                                  tmp_path: Path) -> None:
    write(home / "notes/prefs.md", "MY-PREFS")
    write(tmp_path / "outside.md", "OUTSIDE")
    write(home / ".claude/CLAUDE.md", "Mine: @~/notes/prefs.md\n@../../outside.md\n")
    mem = load_memory(repo, None, home / ".claude")
    assert "MY-PREFS" in mem.block() and "OUTSIDE" not in mem.block()
    [warning] = mem.warnings
    assert "@../../outside.md not imported" in warning


def test_an_inline_import_keeps_the_repository_boundary(repo: Path, tmp_path: Path,
                                                        home: Path) -> None:
    write(tmp_path / "secret.md", "TOP-SECRET")
    write(repo / "CLAUDE.md", "Context: @../secret.md and /etc: @/etc/hostname\n")
    mem = load_memory(repo, None)
    assert "TOP-SECRET" not in mem.block()
    assert len(mem.warnings) == 2 and all("not imported" in w for w in mem.warnings)
