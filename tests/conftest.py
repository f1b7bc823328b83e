"""Shared fixtures: every test gets its own temporary workdir."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

# pg_cluster / pg_schema / pg_db: a throwaway PostgreSQL server for the pg backend's tests;
# team_backend: the team stores on files and on PostgreSQL, for the contract tests;
# board_backend: the board's contract tests once per backend (files, postgresql).
pytest_plugins = ["support.pg", "support.team_backends", "support.board_backends"]

# The property tests (shell analysis against real bash) draw the same examples on every run,
# so a submission's CI is not decided by luck; AGENT_CLI_FUZZ=random explores new ones.
settings.register_profile("fixed", derandomize=True)
settings.load_profile("default" if os.environ.get("AGENT_CLI_FUZZ") == "random" else "fixed")


def pytest_configure(config: pytest.Config) -> None:
    # A conversation our loop would have to repair before a request fails the test (and the
    # CLI subprocesses, which inherit it) instead of being fixed quietly: agent/agent.py.
    os.environ.setdefault("AGENT_CLI_STRICT_CONVERSATION", "1")
    # Model retries keep their real backoff code but wait milliseconds (models/retry.py);
    # a server's retry-after is still honoured as sent.
    os.environ.setdefault("AGENT_CLI_RETRY_BASE_S", "0.005")
    # The user's own ~/.agent-cli (settings, AGENTS.md) never leaks into a test: an empty
    # user directory for the whole session (tests of the user layer point it elsewhere).
    os.environ["AGENT_CLI_HOME"] = tempfile.mkdtemp(prefix="agent-cli-home-")
    # Likewise the user's ~/.claude (commands, agents, skills, CLAUDE.md): Claude Code's own
    # CLAUDE_CONFIG_DIR points it at an empty directory (tests of it point it elsewhere).
    os.environ["CLAUDE_CONFIG_DIR"] = tempfile.mkdtemp(prefix="claude-home-")
    # A team board in the caller's environment (--board's variable) never reaches a test:
    # every test's team lives in its own workdir unless it names a board itself.
    os.environ.pop("AGENT_CLI_BOARD", None)
    # The CLI subprocesses inherit fd 0. Whatever stdin the runner gives (a CI's open, silent
    # pipe looks like piped input to `-p`), they read /dev/null unless a test pipes to them.
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    d = tmp_path / "work"
    d.mkdir()
    return d


@pytest.fixture
def cleanup():
    """Register runtimes (`cleanup(rt)`); at the end each is closed and must leave no
    teammate busy. The broker is detached first so nobody waits on a human that is gone."""
    runtimes = []
    yield runtimes.append
    for rt in runtimes:
        rt.broker.detach_ui()
        assert rt.close(timeout=10.0) == []


@pytest.fixture
def claude_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's ~/.claude for one test ($CLAUDE_CONFIG_DIR points at it, empty)."""
    home = tmp_path / "claude-home"
    home.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home))
    return home
