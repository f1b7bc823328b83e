"""A teammate working in a task's worktree cannot call an MCP tool that may write: the server
runs in the user's main tree, so the write would skip the worktree and the landing. Read-only
tools still run; the lead, in the main tree, still calls the writing tool."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from support.team import Recorder, make_runtime
from support.worktree import Call, Reply, complete_step, git_repo

from agent_cli.mcp.config import parse_servers
from agent_cli.mcp.manager import McpManager
from agent_cli.models.scripted import ScriptedModel

SERVER = str(Path(__file__).parents[1] / "support" / "mcp_server.py")
WAIT = 30.0


def _with_mcp(rt, workdir: Path) -> None:
    specs = parse_servers({"fx": {"command": sys.executable, "args": [SERVER]}}, "flag", "t",
                          os.environ)
    rt.mcp = McpManager(workdir, specs)
    rt.mcp.start()
    assert rt.mcp.wait_ready(WAIT), rt.mcp.describe()


def test_a_teammate_in_a_worktree_is_refused_a_writing_mcp_tool(workdir, cleanup) -> None:
    git_repo(workdir, {"a.txt": "a\n"})
    model = ScriptedModel({
        "alice": [
            Reply("Trying the server.", tool_calls=[
                Call("mcp__fx__touch", {"path": "from-worktree.txt"}),
                Call("mcp__fx__echo", {"text": "read-only still works"})]),
            complete_step("done"),
        ],
        "lead": [
            Reply("My turn.", tool_calls=[Call("mcp__fx__touch", {"path": "from-lead.txt"})]),
            Reply("Done."),
        ],
    })
    rt = make_runtime(workdir, model, allow=["mcp__fx"], permission_mode="acceptEdits")
    cleanup(rt)
    rec = Recorder(rt)
    _with_mcp(rt, workdir)
    task = rt.board.create("use the server")
    rt.team.spawn("alice", "worker")
    rec.wait_event("TaskEvent", action="completed", task_id=task.id, timeout=WAIT)
    [touch] = [e for e in rec.of("ToolFinished", agent="alice") if e.tool == "mcp__fx__touch"]
    assert not touch.ok
    assert "not marked read-only" in touch.content and "task #1's worktree" in touch.content
    [echo] = [e for e in rec.of("ToolFinished", agent="alice") if e.tool == "mcp__fx__echo"]
    assert echo.ok and "read-only still works" in echo.content
    assert not (workdir / "from-worktree.txt").exists()  # the server never wrote it
    assert not list(workdir.rglob("from-worktree.txt"))
    audit = (workdir / ".team" / "audit.jsonl").read_text(encoding="utf-8")
    assert '"source": "worktree"' in audit
    # The lead works in the main tree: the same tool, under the same rule, runs there.
    rt.team.make_lead().run_turn("go")
    assert (workdir / "from-lead.txt").read_text(encoding="utf-8") == "made by mcp"
