"""The audit log keeps the whole input of every decision: what ran can always be read back,
a long command inline or aside under its hash, never cut."""

from __future__ import annotations

import pytest

from agent_cli.agent.tool_calls import ToolRunner
from agent_cli.errors import StorageError
from agent_cli.models.base import ToolUseBlock
from agent_cli.permissions.audit import INLINE_MAX
from agent_cli.runtime import Runtime, RuntimeConfig
from agent_cli.tools.base import ToolContext, ToolSet
from agent_cli.tools.workspace import workspace_tools


def _run(workdir, command: str, **config):
    rt = Runtime.open(workdir, RuntimeConfig(**config))
    runner = ToolRunner("alice", ToolSet(workspace_tools()), rt.gate, lambda e: None,
                        lambda: ToolContext("alice", workdir))
    out = runner.run_one(ToolUseBlock(id="t", name="shell", input={"command": command}))
    return rt, out


def test_a_long_approved_command_is_kept_whole_in_the_line(workdir):
    command = "echo " + "a" * 3000 + " # " + "tail-marker"
    rt, out = _run(workdir, command, allow=["Bash(echo *)"])
    assert not out.is_error
    entry = rt.audit.entries()[-1]
    assert entry["decision"] == "allow" and entry["input"]["command"] == command


def test_a_huge_denied_command_is_stored_aside_and_read_back_exactly(workdir):
    command = "true; " + "x" * (INLINE_MAX * 3) + " rm -rf important"
    rt, out = _run(workdir, command)
    assert out.is_error and "Denied" in out.content
    entry = rt.audit.entries()[-1]
    assert entry["input"]["command"]["$blob"].startswith("sha256:")
    assert entry["input"]["command"]["chars"] == len(command)
    assert rt.audit.full_input(entry)["command"] == command
    assert len((workdir / ".team" / "audit.jsonl").read_text()) < INLINE_MAX  # line stays small


def test_a_blob_changed_after_the_fact_is_reported_not_trusted(workdir):
    command = "y" * (INLINE_MAX + 1)
    rt, _ = _run(workdir, command)
    entry = rt.audit.entries()[-1]
    [blob] = (workdir / ".team" / "audit-blobs").iterdir()
    blob.write_text("echo harmless")
    with pytest.raises(StorageError, match="does not match its hash"):
        rt.audit.full_input(entry)
