"""The team's database URL (and its password) is the host's credential, like the API key: a
command the model runs never inherits $AGENT_CLI_BOARD, so it cannot write the board's
rows by hand (answer its own approval, open its own plan gate, forge an event)."""

from __future__ import annotations

import pytest

from agent_cli.sandbox.bwrap import sandbox_env
from agent_cli.tools.base import ToolContext
from agent_cli.tools.shell import shell_tool

URL = "postgresql://ann:s3cret@db.example/team"


def test_a_command_does_not_see_the_board_url(workdir, monkeypatch) -> None:
    monkeypatch.setenv("AGENT_CLI_BOARD", URL)
    monkeypatch.setenv("AGENT_CLI_W4_KEPT", "yes")  # everything else is inherited as before
    tool = shell_tool()
    out = tool.run(tool.parse({"command": "env"}), ToolContext(agent="alice", workdir=workdir))
    assert "AGENT_CLI_W4_KEPT=yes" in out.content
    assert "s3cret" not in out.content and "AGENT_CLI_BOARD" not in out.content


@pytest.mark.parametrize("proxied", [False, True])
def test_the_sandboxs_environment_drops_the_board_url(proxied: bool) -> None:
    env = sandbox_env({"AGENT_CLI_BOARD": URL, "HOME": "/h"}, proxied=proxied)
    assert "AGENT_CLI_BOARD" not in env and env["HOME"] == "/h"
