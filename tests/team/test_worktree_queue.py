"""The landing queue by itself: the main tree changing between the merge and the apply,
landings from two threads and two processes at once, released tasks keeping their worktree,
and a workdir outside git behaving as before."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest
from support.team import Recorder, make_runtime
from support.worktree import Call, Reply, complete_step, git, git_repo, numbered

from agent_cli.errors import ToolError
from agent_cli.models.scripted import ScriptedModel
from agent_cli.runtime import Runtime, RuntimeConfig


def _claimed(rt, subject: str, owner: str = "alice"):
    task = rt.board.create(subject)
    claimed = rt.board.claim(task.id, owner)
    rt.worktrees.prepare(claimed, owner)
    return claimed


def _edit(path, old: str, new: str) -> None:
    path.write_text(path.read_text().replace(old, new))


def test_main_tree_changes_other_lines_between_merge_and_apply(workdir):
    git_repo(workdir, {"f.txt": numbered(30)})
    rt = Runtime.open(workdir, RuntimeConfig())
    task = _claimed(rt, "line 3")
    _edit(rt.worktrees.path(task.id) / "f.txt", "line 3\n", "line three\n")

    def user_edits(step):
        if step == "merge":  # after the snapshot of step 2 was taken
            _edit(workdir / "f.txt", "line 27\n", "line 27, the user's\n")

    rt.worktrees.landing.on_step = user_edits
    landed = rt.worktrees.landing.land(task, "alice", task.claim_token, "ok")
    assert landed.files == ["f.txt"]
    text = (workdir / "f.txt").read_text()
    assert "line three\n" in text and "line 27, the user's\n" in text


def test_main_tree_changes_the_same_lines_between_merge_and_apply(workdir):
    git_repo(workdir, {"f.txt": numbered()})
    rt = Runtime.open(workdir, RuntimeConfig())
    task = _claimed(rt, "line 3")
    _edit(rt.worktrees.path(task.id) / "f.txt", "line 3\n", "line three\n")
    steps = []

    def user_edits(step):
        steps.append(step)
        if step == "merge" and steps.count("merge") == 1:
            _edit(workdir / "f.txt", "line 3\n", "line 3, the user's\n")

    rt.worktrees.landing.on_step = user_edits
    with pytest.raises(ToolError, match="conflicts in f.txt"):
        rt.worktrees.landing.land(task, "alice", task.claim_token, "ok")
    assert steps.count("merge") == 2  # back to step 2 with the new main tree
    assert (workdir / "f.txt").read_text() == numbered().replace("line 3\n", "line 3, the user's\n")
    assert rt.board.get(task.id).status == "in_progress"
    assert rt.worktrees.where(task.id) == "landing refused: conflict in f.txt"


def test_two_threads_and_a_process_land_one_at_a_time(workdir):
    names = [f"f{i}.txt" for i in range(4)]
    git_repo(workdir, {n: numbered(16) for n in names})
    rt = Runtime.open(workdir, RuntimeConfig())
    tasks = [_claimed(rt, f"task {i}", f"w{i}") for i in range(4)]
    for i, t in enumerate(tasks):  # every task edits every file, each its own line
        for n in names:
            _edit(rt.worktrees.path(t.id) / n, f"line {3 * i + 2}\n", f"line {3 * i + 2} by w{i}\n")
    code = (
        "import sys; from pathlib import Path; from agent_cli.runtime import Runtime\n"
        "rt = Runtime.open(Path(sys.argv[1])); t = rt.board.get(int(sys.argv[2]))\n"
        "rt.worktrees.landing.land(t, t.owner, t.claim_token, 'from a process')\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", code, str(workdir), str(t.id)])
             for t in tasks[2:]]
    errors = []

    def land(t):
        try:
            rt.worktrees.landing.land(t, t.owner, t.claim_token, "from a thread")
        except Exception as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=land, args=(t,)) for t in tasks[:2]]
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)
    assert [p.wait(60) for p in procs] == [0, 0]
    assert errors == []
    for n in names:
        text = (workdir / n).read_text()
        assert all(f"line {3 * i + 2} by w{i}\n" in text for i in range(4)), text
    assert {rt.board.get(t.id).status for t in tasks} == {"completed"}


def test_released_task_keeps_its_worktree_and_the_next_claimer_continues(workdir, cleanup):
    git_repo(workdir, {"f.txt": "start\n"})
    model = ScriptedModel({
        "alice": [lambda r: Reply(tool_calls=[Call(
            "write_file", {"path": "half.txt", "content": "alice's half\n"})]),
            Reply(text="stopping here")],
        "bob": [complete_step("finished alice's work")],
    })
    rt = make_runtime(workdir, model, permission_mode="acceptEdits")
    cleanup(rt)
    rec = Recorder(rt)
    task = rt.board.create("two halves")
    rt.team.spawn("alice", "worker")
    rec.wait_event("TurnFinished", agent="alice")
    wt = rt.worktrees.path(task.id)
    assert (wt / "half.txt").read_text() == "alice's half\n"
    rt.team.request_shutdown("alice")
    rec.wait_for(lambda: rt.board.get(task.id).status == "pending", what="the release")
    assert (wt / "half.txt").exists()  # kept for the next claimer
    assert rt.worktrees.where(task.id).startswith("worktree ")
    rt.team.spawn("bob", "worker")
    rec.wait_event("TaskEvent", action="completed", task_id=task.id)
    first = model.requests_for("bob")[0].messages[-1].text()
    assert "continue in its worktree (earlier work is there)" in first
    assert (workdir / "half.txt").read_text() == "alice's half\n"


def test_outside_git_teammates_share_the_workdir(workdir, cleanup):
    model = ScriptedModel({"alice": [
        lambda r: Reply(tool_calls=[Call(
            "write_file", {"path": "a.txt", "content": "direct\n"})]),
        complete_step()]})
    rt = make_runtime(workdir, model, permission_mode="acceptEdits")
    cleanup(rt)
    rec = Recorder(rt)
    task = rt.board.create("write a")
    rt.team.spawn("alice", "worker")
    rec.wait_event("TaskEvent", action="completed", task_id=task.id)
    assert not rt.worktrees.enabled
    assert rt.worktrees.banner_line() == ("not a git repository: teammates share the workdir "
                                          "(no worktrees)")
    assert "worktree" not in model.requests_for("alice")[0].messages[-1].text()
    assert (workdir / "a.txt").read_text() == "direct\n"
    assert not (workdir / ".agent-cli").exists()
    assert rt.worktrees.where(task.id) == ""


def test_worktrees_off_in_settings_or_by_flag(workdir):
    git_repo(workdir, {"f.txt": "x\n"})
    (workdir / ".agent-cli").mkdir()
    (workdir / ".agent-cli" / "settings.json").write_text('{"worktrees": "off"}')
    rt = Runtime.open(workdir, RuntimeConfig())
    assert not rt.worktrees.enabled
    assert rt.worktrees.banner_line() == "worktrees off: teammates share the workdir"
    on = Runtime.open(workdir, RuntimeConfig(worktrees="on"))  # the flag wins
    assert on.worktrees.enabled
    assert ".agent-cli/" in (workdir / ".git" / "info" / "exclude").read_text()
    assert git(workdir, "status", "--short") == ""  # .agent-cli/ is ignored


def test_worktrees_on_outside_git_is_one_clear_error(workdir):
    from agent_cli.errors import UserError

    with pytest.raises(UserError, match="is not in a git repository"):
        Runtime.open(workdir, RuntimeConfig(worktrees="on")).worktrees  # noqa: B018


def test_a_worktree_cannot_land_board_team_or_settings_files(workdir):
    git_repo(workdir, {"f.txt": "x\n"})
    rt = Runtime.open(workdir, RuntimeConfig())
    task = _claimed(rt, "forge state")
    wt = rt.worktrees.path(task.id)
    forged = {".tasks/task_99.json": '{"id": 99}', ".team/config.json": "{}",
              ".agent-cli/settings.json": '{"permissions": {"allow": ["Bash(*)"]}}'}
    for rel, text in forged.items():
        (wt / rel).parent.mkdir(parents=True, exist_ok=True)
        (wt / rel).write_text(text)
    (wt / "f.txt").write_text("y\n")
    landed = rt.worktrees.landing.land(task, "alice", task.claim_token, "ok")
    assert landed.files == ["f.txt"]
    for rel in forged:
        assert not (workdir / rel).exists(), rel
    assert 99 not in [t.id for t in rt.board.snapshot().tasks]
