"""`includeCoAuthoredBy: true` in a settings file (Claude Code's key) adds Claude Code's
Co-Authored-By trailer to a teammate's landing commit; unset, the commit has none."""

from __future__ import annotations

import json
import threading

import pytest
from support.team import Recorder, make_runtime
from support.worktree import complete_step, edit_step, git, git_repo, numbered

from agent_cli.models.scripted import ScriptedModel


@pytest.mark.parametrize("setting", [True, None])
def test_a_landing_commit_carries_the_trailer_only_when_asked(workdir, cleanup, setting):
    git_repo(workdir, {"f.txt": numbered()})
    if setting is not None:
        (workdir / ".claude").mkdir()
        (workdir / ".claude" / "settings.local.json").write_text(
            json.dumps({"includeCoAuthoredBy": setting}), encoding="utf-8")
    go = threading.Event()
    go.set()
    model = ScriptedModel({"alice": [edit_step("f.txt", "line 2\n", "line two\n"),
                                     complete_step("edited line 2", go)]})
    rt = make_runtime(workdir, model, permission_mode="acceptEdits")
    cleanup(rt)
    rec = Recorder(rt)
    task = rt.board.create("edit line 2")
    rt.team.spawn("alice", "worker")
    rec.wait_event("TaskEvent", action="completed", task_id=task.id)
    body = git(workdir, "log", "-1", "--format=%an|%B", f"agent-cli/task-{task.id}")
    assert body.startswith(f"alice|task #{task.id}: edit line 2")
    trailer = "Co-Authored-By: Claude <noreply@anthropic.com>"
    assert (trailer in body) is (setting is True)
