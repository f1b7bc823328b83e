"""Completion is verified by the host, and a denied approval keeps the task with its owner."""

from __future__ import annotations

from support.team import (
    WAIT,
    Call,
    FakeHuman,
    Recorder,
    Reply,
    claimed_in,
    complete_claimed,
    make_runtime,
)

from agent_cli.board.models import Verify
from agent_cli.models.scripted import ScriptedModel


def _result_of(model: ScriptedModel, agent: str, index: int) -> str:
    """The tool_result text the model saw at the start of request `index`."""
    msg = model.requests_for(agent)[index].messages[-1]
    return " ".join(b.content for b in msg.content if b.type == "tool_result")


def test_verify_failure_keeps_the_task_and_a_match_completes_it(workdir, cleanup):
    (workdir / "main.py").write_text("print(42)\n")
    (workdir / "expected.txt").write_text("43\n")
    model = ScriptedModel({"alice": [
        complete_claimed("it prints 42"),
        Reply(text="the check failed"),
        complete_claimed("it prints 42, retried"),  # after the lead's message
    ]})
    rt = make_runtime(workdir, model)
    cleanup(rt)
    rec = Recorder(rt)
    human = FakeHuman(rt, lambda req: "allow_once")
    verify = Verify(command="python3 main.py", expected_stdout_file="expected.txt")
    task = rt.board.create("check the output", verify=verify)
    rt.team.spawn("alice", "reviewer")

    failed = rec.wait_event("TaskEvent", action="verify_failed", task_id=task.id)
    assert "expected stdout '43', got '42'" in failed.detail
    rec.wait_event("TurnFinished", agent="alice")
    assert "expected stdout '43', got '42'" in _result_of(model, "alice", 1)
    held = rt.board.get(task.id)
    assert (held.status, held.owner) == ("in_progress", "alice")
    # the human was asked, and told who wrote the command
    assert [r.purpose for r in human.asked] == [
        f"task #{task.id} verify, written by an unknown writer (an older task file)"
    ]
    assert rt.team.wait_quiet(WAIT)
    reason = rt.roster.get("alice").idle_reason
    assert reason.startswith(f"holds #{task.id}: verify failed: expected stdout '43', got '42'")
    # a failed verify is a reported blocker: no reminder, the lead hears it from the host
    assert not [n for n in rec.of("Notice", agent="alice") if "reminded" in n.text]
    block = rt.team.lead_inbox_block()
    assert "could not finish it: verify failed: expected stdout '43', got '42'" in block

    (workdir / "expected.txt").write_text("42\n")
    rt.mail.send("lead", "alice", "expected.txt is fixed, try again")
    rec.wait_event("TaskEvent", action="completed", task_id=task.id)
    done = rt.board.get(task.id)
    assert (done.status, done.owner, done.result) == ("completed", "alice",
                                                      "it prints 42, retried")
    assert len(human.asked) == 2
    assert rt.team.wait_quiet(WAIT)
    model.assert_used_up()
    human.close()


def test_inline_expected_stdout_and_exit_code(workdir, cleanup):
    (workdir / "check.sh").write_text("echo hi\nexit 3\n")
    model = ScriptedModel({"alice": [complete_claimed(), Reply(text="hm")]})
    rt = make_runtime(workdir, model, allow=["Bash(sh check.sh)"])  # a rule, no human
    cleanup(rt)
    rec = Recorder(rt)
    verify = Verify(command="sh check.sh", expected_stdout="hi")
    task = rt.board.create("exit code", verify=verify)
    rt.team.spawn("alice", "worker")
    failed = rec.wait_event("TaskEvent", action="verify_failed", task_id=task.id)
    assert failed.detail.startswith("expected exit code 0, got 3")
    assert rt.board.get(task.id).status == "in_progress"


def test_saying_done_or_a_wrong_token_completes_nothing(workdir, cleanup):
    def wrong_token(request):
        task_id, _ = claimed_in(request)
        return Reply(text="All done!", tool_calls=[Call("complete_task", {
            "task_id": task_id, "claim_token": "0" * 32, "result": "trust me"})])

    # wrong token, then it ends its turn claiming success: reminded (with the right token),
    # it completes the task properly
    model = ScriptedModel({"alice": [wrong_token, Reply(text="It is done."),
                                     complete_claimed("really done")]})
    rt = make_runtime(workdir, model)
    cleanup(rt)
    rec = Recorder(rt)
    task = rt.board.create("real work")
    rt.team.spawn("alice", "worker")
    rec.wait_event("TurnFinished", agent="alice")
    assert "wrong claim_token" in _result_of(model, "alice", 1)
    rec.wait_event("TaskEvent", action="completed", task_id=task.id)
    assert not [e for e in rt.board.events() if e["action"] == "completed"
                and e["details"].get("result") == "trust me"]
    reminder = model.requests_for("alice")[2].messages[-1].text()
    _, token = claimed_in(model.requests_for("alice")[0])
    assert "<host-reminder" in reminder and f"task #{task.id}" in reminder
    assert f"claim_token {token}" in reminder
    assert rt.board.get(task.id).result == "really done"
    model.assert_used_up()


def test_denied_shell_keeps_the_task_with_its_owner_and_reports_to_the_lead(workdir, cleanup):
    (workdir / "main.py").write_text("print(42)\n")
    model = ScriptedModel({"alice": [
        complete_claimed("read main.py"),
        Reply(tool_calls=[Call("shell", {"command": "python3 main.py"})]),
        Reply(text="the run was denied, reporting"),
    ]})
    rt = make_runtime(workdir, model)
    cleanup(rt)
    rec = Recorder(rt)
    human = FakeHuman(rt, lambda req: "deny")
    source = rt.board.create("read source")
    run = rt.board.create("run it", blocked_by=[source.id])
    rt.team.spawn("alice", "reader")
    rec.wait_event("TaskEvent", agent="alice", action="claimed", task_id=run.id)
    rt.team.spawn("bob", "reviewer")  # an idle teammate must not take alice's task

    rec.wait_event("MessageEvent", agent="alice", to="lead", msg_type="message")
    assert rt.team.wait_quiet(WAIT)
    assert [(r.agent, r.tool) for r in human.asked] == [("alice", "shell")]
    assert rt.board.get(source.id).status == "completed"  # what was done stays done
    held = rt.board.get(run.id)
    assert (held.status, held.owner) == ("in_progress", "alice")
    assert model.requests_for("bob") == []
    alice = rt.roster.get("alice")
    assert (alice.status, alice.current_task) == ("idle", run.id)
    assert alice.idle_reason.startswith(f"holds #{run.id}: shell run was denied")
    block = rt.team.lead_inbox_block()
    assert f'from="alice" type="message">I hold task #{run.id} (run it)' in block
    assert not [e for e in rt.board.events() if e["action"] == "released"]
    model.assert_used_up()
    human.close()


def test_a_teammate_that_reports_a_denial_itself_gets_no_second_report(workdir, cleanup):
    model = ScriptedModel({"alice": [
        Reply(tool_calls=[Call("write_file", {"path": "notes.md", "content": "x"})]),
        Reply(tool_calls=[Call("send_message", {"to": "lead", "content": "write denied"})]),
        Reply(text="waiting"),
    ]})
    rt = make_runtime(workdir, model)
    cleanup(rt)
    rec = Recorder(rt)
    human = FakeHuman(rt, lambda req: "deny")
    task = rt.board.create("write notes")
    rt.team.spawn("alice", "writer")
    rec.wait_event("TurnFinished", agent="alice")
    assert rt.team.wait_quiet(WAIT)
    assert not (workdir / "notes.md").exists()
    assert rt.board.get(task.id).owner == "alice"
    block = rt.team.lead_inbox_block()
    assert block.count('from="alice" type="message"') == 1
    assert "write denied" in block
    assert rt.roster.get("alice").idle_reason.startswith(f"holds #{task.id}: write_file was")
    human.close()
