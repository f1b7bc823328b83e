"""Completion is verified by the host, and a denied approval keeps the task with its owner."""

from __future__ import annotations

import os
import threading
from pathlib import Path

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
from agent_cli.team import verify as verify_mod
from agent_cli.tools.base import ToolContext


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


def _gone(pid: int, timeout: float = 5.0) -> bool:
    """The process no longer runs (a zombie nobody reaped counts as gone). A SIGKILL just
    sent takes a moment to land on a loaded machine: wait for it on a pidfd, no polling."""
    import select

    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        if select.select([fd], [], [], timeout)[0]:
            return True
    finally:
        os.close(fd)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state in ("Z", "X")


def _in_thread(fn):
    """Run fn() on a thread; return its result, failing the test if it takes over WAIT s."""
    box: dict = {}
    done = threading.Event()

    def run():
        try:
            box["value"] = fn()
        finally:
            done.set()

    threading.Thread(target=run, daemon=True).start()
    assert done.wait(WAIT), "still running: the command was not stopped"
    return box["value"]


def test_verify_is_stopped_by_the_callers_cancel_event(workdir):
    cancel = threading.Event()
    cancel.set()  # e.g. Esc was pressed while the verify was being approved
    check = Verify(command="sleep 60; echo 42", expected_stdout="42")
    outcome = _in_thread(lambda: verify_mod.check_verify(check, workdir, cancel))
    assert not outcome.passed and outcome.detail == "verify command interrupted by the user"


def test_verify_does_not_wait_for_background_jobs_and_stops_them(workdir):
    check = Verify(command="sleep 60 & echo $! > bg.pid; echo 42", expected_stdout="42")
    outcome = _in_thread(lambda: verify_mod.check_verify(check, workdir))
    assert outcome.passed
    assert _gone(int((workdir / "bg.pid").read_text()))


def test_a_verify_timeout_kills_the_whole_process_group(workdir, monkeypatch):
    monkeypatch.setattr(verify_mod, "VERIFY_TIMEOUT_S", 0.3)
    check = Verify(command="sleep 60 & echo $! > bg.pid; sleep 60")
    outcome = _in_thread(lambda: verify_mod.check_verify(check, workdir))
    assert not outcome.passed and outcome.detail == "verify command timed out after 0.3s"
    assert _gone(int((workdir / "bg.pid").read_text()))


def test_run_verify_passes_ctx_cancel_and_keeps_stderr_out_of_stdout(workdir):
    rt = make_runtime(workdir, ScriptedModel({"*": []}), allow=["Bash"])
    task = rt.board.create("v", verify={"command": "echo 42; echo oops >&2; exit 3",
                                        "expected_stdout": "42", "expected_exit_code": 3})
    ctx = ToolContext(agent="alice", workdir=workdir)
    assert verify_mod.run_verify(rt, task, ctx).passed  # stderr is not part of the comparison
    slow = rt.board.create("w", verify={"command": "sleep 60", "expected_stdout": ""})
    ctx.cancel.set()
    outcome = _in_thread(lambda: verify_mod.run_verify(rt, slow, ctx))
    assert not outcome.passed and "interrupted" in outcome.detail
    rt.close(WAIT)
