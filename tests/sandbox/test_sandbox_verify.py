"""A task's verify runs inside the completing agent's boundary: a check that stays in the
workspace passes without a prompt, one that writes outside fails, the task stays in
progress, and the reason names the boundary."""

from __future__ import annotations

import pytest
from support.sandbox import need_bwrap, sandboxed_runtime

from agent_cli.errors import ToolError
from agent_cli.team.verify import complete_verified
from agent_cli.tools.base import ToolContext


def _claimed(rt, command: str):
    task = rt.board.create("checked", verify={"command": command, "expected_stdout": "ok"},
                           actor="lead")
    return rt.board.claim(task.id, "alice")


def test_a_verify_inside_the_workspace_passes_unasked(workdir, cleanup):
    need_bwrap()
    rt = sandboxed_runtime(workdir)
    cleanup(rt)
    task = _claimed(rt, "echo made > built.txt && echo ok")
    text = complete_verified(rt, ToolContext("alice", workdir), task.id, task.claim_token, "x")
    assert "verify passed" in text and (workdir / "built.txt").read_text() == "made\n"
    verify_lines = [e for e in rt.audit.entries() if e["tool"] == "verify"]
    assert verify_lines[-1]["source"] == "sandboxed"


def test_a_verify_that_writes_outside_fails_and_says_why(workdir, cleanup, outside):
    need_bwrap()
    rt = sandboxed_runtime(workdir)
    cleanup(rt)
    task = _claimed(rt, f"echo x > {outside}/planted && echo ok")
    with pytest.raises(ToolError) as err:
        complete_verified(rt, ToolContext("alice", workdir), task.id, task.claim_token, "x")
    assert f"sandbox: write outside the sandbox refused: {outside}/planted" in str(err.value)
    assert not (outside / "planted").exists()
    assert rt.board.get(task.id).status == "in_progress"
