"""Teammates in their own worktrees: parallel edits of one file land cleanly or are refused
with the conflict, the user's own uncommitted edits survive, blocked tasks start from what
their blockers landed, and verify runs on the merged state."""

from __future__ import annotations

import threading

import pytest
from support.team import Recorder, make_runtime
from support.worktree import (
    WAIT,
    Call,
    Reply,
    complete_step,
    edit_step,
    git,
    git_repo,
    last_result,
    numbered,
    worker,
)

from agent_cli.board.models import Verify
from agent_cli.models.scripted import ScriptedModel


def _team(workdir, model, cleanup, **config):
    config.setdefault("permission_mode", "acceptEdits")
    rt = make_runtime(workdir, model, **config)
    cleanup(rt)
    return rt, Recorder(rt)


def _completed(rec, task_id):
    return rec.wait_event("TaskEvent", action="completed", task_id=task_id)


@pytest.mark.parametrize("first", ["alice", "bob"])
def test_parallel_edits_of_different_lines_both_land_in_either_order(workdir, cleanup, first):
    git_repo(workdir, {"f.txt": numbered(), "notes.txt": "user notes\n"})
    go = {"alice": threading.Event(), "bob": threading.Event()}
    # each teammate edits "its" line whichever task it claimed
    model = ScriptedModel({
        "alice": [edit_step("f.txt", "line 2\n", "line two (alice)\n"),
                  complete_step("alice edited line 2", go["alice"])],
        "bob": [edit_step("f.txt", "line 9\n", "line nine (bob)\n"),
                complete_step("bob edited line 9", go["bob"])],
    })
    rt, rec = _team(workdir, model, cleanup)
    a = rt.board.create("edit line 2")
    b = rt.board.create("edit line 9")
    rt.team.spawn("alice", "worker")
    rt.team.spawn("bob", "worker")
    # the user edits another file in the main tree while the teammates work
    rec.wait_for(lambda: len(rec.of("ToolFinished")) >= 2, what="both edits")
    (workdir / "notes.txt").write_text("user notes, edited while the team works\n")
    second = "bob" if first == "alice" else "alice"
    held = {name: rt.board.held_by(name).id for name in go}
    go[first].set()
    _completed(rec, held[first])
    go[second].set()
    _completed(rec, held[second])

    text = (workdir / "f.txt").read_text()
    assert "line two (alice)\n" in text and "line nine (bob)\n" in text
    assert text.count("\n") == 10 and "<<<<<<<" not in text
    assert (workdir / "notes.txt").read_text() == "user notes, edited while the team works\n"
    assert git(workdir, "diff", "--cached") == ""  # the user's index is untouched
    assert git(workdir, "log", "--format=%s", "main") == "start\n"  # nothing committed for them
    for t in (a, b):
        assert rt.board.get(t.id).status == "completed"
        assert not (workdir / ".agent-cli" / "worktrees" / f"task-{t.id}").exists()
        log = git(workdir, "log", "--format=%an %s", f"agent-cli/task-{t.id}")
        assert f"{rt.board.get(t.id).owner} task #{t.id}: {t.subject}" in log  # its author
    # each result reaches the lead's inbox just after its task's completed event: wait for both
    rec.wait_for(lambda: len(rec.of("MessageEvent", to="lead", msg_type="result")) >= 2,
                 what="both results sent to the lead")
    results = [m.content for m in rt.mail.fetch("lead").messages if m.type == "result"]
    assert all("files changed: f.txt" in c for c in results) and len(results) == 2
    assert rt.team.wait_quiet(WAIT)
    model.assert_used_up()


def test_same_lines_second_is_refused_resolves_in_its_worktree_then_lands(workdir, cleanup):
    git_repo(workdir, {"f.txt": numbered()})
    alice_done = threading.Event()
    seen: dict[str, str] = {}

    def resolve(request):
        seen["refusal"] = last_result(request)
        wt = workdir / ".agent-cli" / "worktrees" / "task-2"
        seen["worktree"] = (wt / "f.txt").read_text()
        seen["main"] = (workdir / "f.txt").read_text()
        merged = numbered().replace("line 5\n", "line five (alice) and (bob)\n")
        return Reply(tool_calls=[Call("write_file", {"path": "f.txt", "content": merged})])

    model = ScriptedModel({
        "alice": [edit_step("f.txt", "line 5\n", "line five (alice)\n"),
                  complete_step("alice")],
        "bob": [edit_step("f.txt", "line 5\n", "line five (bob)\n"),
                complete_step("bob", alice_done), resolve, complete_step("bob, resolved")],
    })
    rt, rec = _team(workdir, model, cleanup)
    a = rt.board.create("alice's line 5")
    b = rt.board.create("bob's line 5")
    rt.team.spawn("alice", "worker")
    rt.team.spawn("bob", "worker")
    _completed(rec, a.id)
    alice_done.set()
    _completed(rec, b.id)

    assert "conflicts in f.txt" in seen["refusal"]
    assert "call complete_task again" in seen["refusal"]
    assert "<<<<<<<" in seen["worktree"] and "line five (alice)" in seen["worktree"]
    assert seen["main"] == numbered().replace("line 5\n", "line five (alice)\n")  # no markers
    final = (workdir / "f.txt").read_text()
    assert final == numbered().replace("line 5\n", "line five (alice) and (bob)\n")
    assert rt.board.get(b.id).result == "bob, resolved"
    assert rt.worktrees.state.get(b.id)["status"] == "landed"
    log = git(workdir, "log", "--format=%s", "agent-cli/task-2")
    assert "conflict with the main tree resolved" in log
    assert rt.team.wait_quiet(WAIT)
    model.assert_used_up()


def test_blocked_task_starts_after_its_blockers_landed_and_sees_both(workdir, cleanup):
    git_repo(workdir, {"README": "hello\n"})
    seen: dict[str, str] = {}

    def look(request):
        wt = workdir / ".agent-cli" / "worktrees" / "task-3"
        seen["a"] = (wt / "a.txt").read_text()
        seen["b"] = (wt / "b.txt").read_text()
        return Reply(tool_calls=[Call("write_file", {"path": "c.txt", "content": "c\n"})])

    def write(path, text):
        return Reply(tool_calls=[Call("write_file", {"path": path, "content": text})])

    model = ScriptedModel({"*": [worker({
        "A": lambda r: write("a.txt", "from A\n"),
        "B": lambda r: write("b.txt", "from B\n"),
        "C": look,
    })] * 20})
    rt, rec = _team(workdir, model, cleanup)
    a = rt.board.create("A")
    b = rt.board.create("B")
    c = rt.board.create("C", blocked_by=[a.id, b.id])
    rt.team.spawn("alice", "worker")
    rt.team.spawn("bob", "worker")
    _completed(rec, c.id)
    assert seen == {"a": "from A\n", "b": "from B\n"}
    for name, text in (("a.txt", "from A\n"), ("b.txt", "from B\n"), ("c.txt", "c\n")):
        assert (workdir / name).read_text() == text
    # landed results stay uncommitted in the user's tree until the user commits them
    assert git(workdir, "status", "--short", "--", "a.txt", "b.txt", "c.txt").split() == [
        "??", "a.txt", "??", "b.txt", "??", "c.txt"]
    assert rt.team.wait_quiet(WAIT)


def test_verify_runs_on_the_merged_state(workdir, cleanup):
    """Three items pass against the limit the task started with, not against the limit the
    user lowered meanwhile in the main tree: refused, and nothing lands."""
    git_repo(workdir, {"items.txt": "a\nb\n", "limit.txt": "3\n",
                       "check.sh": 'test "$(wc -l < items.txt)" -le "$(cat limit.txt)"\n'})
    user_edited = threading.Event()
    seen = {}

    def after(request):
        seen["refusal"] = last_result(request)
        return Reply(text="the limit changed under me")

    model = ScriptedModel({"alice": [
        edit_step("items.txt", "b\n", "b\nc\n"),
        complete_step("three items", user_edited), after,
    ]})
    rt, rec = _team(workdir, model, cleanup, allow=["Bash(sh check.sh)"])
    verify = Verify(command="sh check.sh", expected_exit_code=0)
    t = rt.board.create("add item c", verify=verify)
    rt.team.spawn("alice", "worker")
    rec.wait_for(lambda: rec.of("ToolFinished"), what="the edit")
    wt = workdir / ".agent-cli" / "worktrees" / f"task-{t.id}"
    alone = git(wt, "diff", "--stat")
    assert "items.txt" in alone
    (workdir / "limit.txt").write_text("2\n")  # the user, in the main tree
    user_edited.set()
    failed = rec.wait_event("TaskEvent", action="verify_failed", task_id=t.id)
    assert "expected exit code 0, got 1" in failed.detail
    rec.wait_event("TurnFinished", agent="alice")
    assert "merged in" in seen["refusal"]
    held = rt.board.get(t.id)
    assert (held.status, held.owner) == ("in_progress", "alice")
    assert (workdir / "items.txt").read_text() == "a\nb\n"  # nothing landed
    assert (workdir / "limit.txt").read_text() == "2\n"
    assert rt.worktrees.where(t.id).startswith("landing refused: verify failed")
    assert (wt / "items.txt").read_text() == "a\nb\nc\n"  # the work is kept


def test_teammate_tools_are_confined_to_the_worktree(workdir, cleanup):
    git_repo(workdir, {"f.txt": "x\n"})
    asked = []

    def escape(request):
        return Reply(tool_calls=[Call("write_file", {"path": "../../../f.txt",
                                                     "content": "overwritten\n"})])

    def shell_pwd(request):
        return Reply(tool_calls=[Call("shell", {"command": "pwd"})])

    def record(request):
        asked.append(last_result(request))
        return Reply(text="done")

    model = ScriptedModel({"alice": [escape, shell_pwd, record]})
    rt, rec = _team(workdir, model, cleanup, allow=["Bash(pwd)"])
    t = rt.board.create("try to escape")
    rt.team.spawn("alice", "worker")
    rec.wait_event("TurnFinished", agent="alice")
    first = last_result(model.requests_for("alice")[1])
    assert "outside the workdir" in first
    wt = (workdir / ".agent-cli" / "worktrees" / f"task-{t.id}").resolve()
    assert asked[0].startswith(str(wt))
    assert (workdir / "f.txt").read_text() == "x\n"


def test_approval_says_which_worktree(workdir, cleanup):
    from support.team import FakeHuman

    git_repo(workdir, {"src/a.py": "x = 1\n"})
    model = ScriptedModel({"alice": [edit_step("src/a.py", "x = 1", "x = 2"),
                                     Reply(text="done")]})
    rt, rec = _team(workdir, model, cleanup, permission_mode="default")
    human = FakeHuman(rt, lambda req: "allow_once")
    t = rt.board.create("bump x")
    rt.team.spawn("alice", "worker")
    rec.wait_event("TurnFinished", agent="alice")
    human.close()
    from agent_cli.ui.approvals import headline

    req = human.asked[0]
    assert req.summary == "src/a.py"
    assert headline(req).plain == f"alice wants to edit `src/a.py` (in task #{t.id}'s worktree)"
    assert (workdir / "src" / "a.py").read_text() == "x = 1\n"  # not landed yet
