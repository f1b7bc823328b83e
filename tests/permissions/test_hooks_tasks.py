"""Task board hooks with real scripts: TaskCreated (exit 2: no task), TaskCompleted (exit 2:
refused like a failed verify, the task stays with its owner), TeammateIdle (exit 2: the
teammate gets the message and keeps working, bounded)."""

from __future__ import annotations

from pathlib import Path

from support.agent import results_of
from support.hooks import Hook, configure
from support.team import Call, Recorder, Reply, claimed_in, make_runtime

from agent_cli.models.base import ModelRequest
from agent_cli.models.scripted import ScriptedModel
from agent_cli.team.idle_hook import MAX_STREAK


def test_task_created_exit_2_creates_nothing(workdir: Path, tmp_path: Path, cleanup) -> None:
    hook = Hook(tmp_path, "created", code=2, stderr="subjects need a ticket number")
    configure(workdir, {"TaskCreated": [("", hook)]})
    model = ScriptedModel({"lead": [
        Reply("", [Call("create_task", {"subject": "write docs", "description": "all"})]),
        Reply("ok")]})
    rt = make_runtime(workdir, model)
    cleanup(rt)
    rt.team.make_lead().run_turn("plan")
    result = results_of(model.requests_for("lead")[1].messages[-1])[0]
    assert result.is_error and result.content == (
        "task not created: a TaskCreated hook refused it: subjects need a ticket number")
    assert rt.board.snapshot().tasks == []
    call = hook.calls()[0]
    assert (call["task_subject"], call["task_description"]) == ("write docs", "all")
    assert call["hook_event_name"] == "TaskCreated" and call["agent"] == "lead"


def test_task_completed_exit_2_refuses_until_the_hook_passes(
    workdir: Path, tmp_path: Path, cleanup
) -> None:
    ready = tmp_path / "ready"
    hook = Hook(tmp_path, "done", code=2, stderr="CHANGELOG not updated", pass_if=ready)
    configure(workdir, {"TaskCompleted": [("", hook)]})

    def complete(request: ModelRequest) -> Reply:
        task_id, token = claimed_in(request)
        return Reply("", [Call("complete_task", {"task_id": task_id, "claim_token": token,
                                                 "result": "wrote it"})])

    def fix_then_complete(request: ModelRequest) -> Reply:
        ready.touch()
        text = request.messages[-1].text() + "".join(
            b.content for b in results_of(request.messages[-1]))
        assert "CHANGELOG not updated" in text
        task = next(t for t in request_board(rt))
        return Reply("", [Call("complete_task", {"task_id": task.id,
                                                 "claim_token": task.claim_token,
                                                 "result": "and the changelog"})])

    model = ScriptedModel({"alice": [complete, fix_then_complete, Reply("finished")]})
    rt = make_runtime(workdir, model)
    cleanup(rt)

    def request_board(runtime):
        return [t for t in runtime.board.snapshot().tasks if t.owner == "alice"]

    rec = Recorder(rt)
    task = rt.board.create("write the docs", actor="lead")
    rt.team.spawn("alice", "writer")
    rec.wait_event("TaskEvent", action="completed")
    failed = rec.of("TaskEvent", action="verify_failed")
    assert [e.detail for e in failed] == ["TaskCompleted hook: CHANGELOG not updated"]
    done = rt.board.get(task.id)
    assert done.status == "completed" and done.result == "and the changelog"
    calls = hook.calls()
    assert len(calls) == 2 and calls[0]["task_id"] == task.id
    assert calls[0]["task_subject"] == "write the docs" and calls[0]["result"] == "wrote it"
    assert calls[0]["agent"] == "alice" and calls[0]["teammate_name"] == "alice"
    assert calls[0]["task"] == {"id": task.id, "subject": "write the docs"}


def test_teammate_idle_exit_2_keeps_the_teammate_working(
    workdir: Path, tmp_path: Path, cleanup
) -> None:
    ready = tmp_path / "ready"
    hook = Hook(tmp_path, "idle", code=2, stderr="run the test suite before idling",
                pass_if=ready)
    configure(workdir, {"TeammateIdle": [("", hook)]})

    def obey(request: ModelRequest) -> Reply:
        assert "run the test suite before idling" in request.messages[-1].text()
        assert 'from="TeammateIdle hook"' in request.messages[-1].text()
        ready.touch()
        return Reply("ran them")

    model = ScriptedModel({"alice": [Reply("hello"), obey]})
    rt = make_runtime(workdir, model)
    cleanup(rt)
    rec = Recorder(rt)
    rt.team.spawn("alice", "dev", prompt="say hello")
    rec.wait_for(lambda: len(model.requests_for("alice")) == 2, what="the second turn")
    assert rt.team.wait_quiet(10.0)
    assert len(model.requests_for("alice")) == 2 and len(hook.calls()) == 2
    call = hook.calls()[0]
    assert call["hook_event_name"] == "TeammateIdle" and call["teammate_name"] == "alice"
    assert call["team_name"] == "default"


def test_a_teammate_idle_hook_that_always_blocks_is_bounded(
    workdir: Path, tmp_path: Path, cleanup
) -> None:
    configure(workdir, {"TeammateIdle": [("", Hook(tmp_path, "idle", code=2, stderr="more"))]})
    model = ScriptedModel({"alice": [Reply("turn")] * (MAX_STREAK + 1)})
    rt = make_runtime(workdir, model)
    cleanup(rt)
    rec = Recorder(rt)
    rt.team.spawn("alice", "dev", prompt="start")
    rec.wait_for(lambda: any("in a row" in e.text for e in rec.of("Notice")), what="bound")
    assert rt.team.wait_quiet(10.0)
    assert len(model.requests_for("alice")) == MAX_STREAK + 1


def test_a_pre_tool_use_hook_sees_and_can_refuse_a_verify_command(
    workdir: Path, tmp_path: Path, cleanup
) -> None:
    hook = Hook(tmp_path, "pre", code=2, stderr="verify commands need review")
    configure(workdir, {"PreToolUse": [("Bash", hook)]})
    from agent_cli.board.models import Verify

    model = ScriptedModel({"alice": [
        lambda req: Reply("", [Call("complete_task", {
            "task_id": claimed_in(req)[0], "claim_token": claimed_in(req)[1],
            "result": "done"})]),
        Reply("could not")]})
    rt = make_runtime(workdir, model, allow=["Bash(touch verified)"])
    cleanup(rt)
    rec = Recorder(rt)
    task = rt.board.create("check it", verify=Verify(command="touch verified",
                                                     expected_exit_code=0), actor="lead")
    rt.team.spawn("alice", "dev")
    failed = rec.wait_event("TaskEvent", action="verify_failed")
    assert "verify commands need review" in failed.detail
    assert not (workdir / "verified").exists()
    assert rt.board.get(task.id).status == "in_progress"
    call = hook.calls()[0]
    assert call["tool_name"] == "Bash"
    assert call["tool_input"] == {"command": "touch verified", "description": ""}


def test_task_created_other_codes_warn_and_json_block_refuses(
    workdir: Path, tmp_path: Path, cleanup
) -> None:
    crash = Hook(tmp_path, "crash", code=1, stderr="hook bug")
    block = Hook(tmp_path, "block", stdout={"decision": "block", "reason": "too vague"})
    configure(workdir, {"TaskCreated": [("", crash)]})
    model = ScriptedModel({"lead": [Reply("", [Call("create_task", {"subject": "a"})]),
                                    Reply("ok")]})
    rt = make_runtime(workdir, model)
    cleanup(rt)
    rec = Recorder(rt)
    rt.team.make_lead().run_turn("plan")
    assert [t.subject for t in rt.board.snapshot().tasks] == ["a"]  # exit 1: no effect
    assert any("exit code 1: hook bug" in e.text for e in rec.of("Notice"))
    configure(workdir, {"TaskCreated": [("", block)]})
    model2 = ScriptedModel({"lead": [Reply("", [Call("create_task", {"subject": "b"})]),
                                     Reply("ok")]})
    rt2 = make_runtime(workdir, model2)
    cleanup(rt2)
    rt2.team.make_lead().run_turn("plan")
    result = results_of(model2.requests_for("lead")[1].messages[-1])[0]
    assert result.is_error and result.content.endswith("refused it: too vague")
    assert [t.subject for t in rt2.board.snapshot().tasks] == ["a"]
