"""AGENT_CLI_HOST names this host in the roster and session records (containers whose host
names are not unique); a value that is not a host name is one line and nothing written."""

from __future__ import annotations

import socket
import subprocess
import sys

from support.cli import cli_env

from agent_cli.team.liveness import this_host


def test_the_variable_replaces_the_system_host_name(monkeypatch):
    monkeypatch.delenv("AGENT_CLI_HOST", raising=False)
    assert this_host() == socket.gethostname()
    monkeypatch.setenv("AGENT_CLI_HOST", "build-7.ci")
    assert this_host() == "build-7.ci"
    monkeypatch.setenv("AGENT_CLI_HOST", "  ")  # blank: the system's
    assert this_host() == socket.gethostname()


def test_a_bad_host_name_is_one_line_and_nothing_is_written(workdir):
    proc = subprocess.run(
        [sys.executable, "-m", "agent_cli", "teammate", "bob", "-C", str(workdir), "--model",
         "demo", "--idle-timeout", "0"], env=cli_env(AGENT_CLI_HOST="two words"),
        capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr == ("agent-cli: AGENT_CLI_HOST='two words': not a host name "
                           "(letters, digits, '.', '_' and '-')\n")
    assert list(workdir.iterdir()) == []
