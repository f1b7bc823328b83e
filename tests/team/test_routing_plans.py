"""A task that requires a plan: whoever holds it — gated or not — needs a plan approved for
that task (that claim of it) before any effectful tool runs; the approval opens nothing else."""

from __future__ import annotations

from support.team import WAIT, Call, Recorder, Reply, claimed_in, make_runtime

from agent_cli.models.base import ToolResultBlock
from agent_cli.models.scripted import ScriptedModel
from agent_cli.team import plans


def results(model: ScriptedModel, agent: str, tool_use_id: str) -> list[ToolResultBlock]:
    found = []
    for req in model.requests_for(agent):
        for msg in req.messages:
            for block in msg.content if isinstance(msg.content, list) else []:
                if isinstance(block, ToolResultBlock) and block.tool_use_id == tool_use_id:
                    found.append(block)
    return found[-1:]


def test_an_ungated_teammate_needs_the_plan_the_task_requires(workdir, cleanup):
    box: dict = {}

    def write_first(request):
        box["task"] = claimed_in(request)
        return Reply(tool_calls=[Call("write_file", {"path": "out.txt", "content": "x\n"},
                                      id="w1")])

    def write_and_complete(request):
        task_id, token = box["task"]
        return Reply(tool_calls=[
            Call("write_file", {"path": "out.txt", "content": "x\n"}, id="w2"),
            Call("complete_task", {"task_id": task_id, "claim_token": token,
                                   "result": "wrote out.txt"}, id="c1")])

    def next_task_write(request):
        box["second"] = claimed_in(request)
        return Reply(tool_calls=[Call("write_file", {"path": "two.txt", "content": "2\n"},
                                      id="w3")])

    model = ScriptedModel({"alice": [
        write_first,
        Reply(tool_calls=[Call("submit_plan", {"plan": "1. write out.txt"}), Call("idle")]),
        write_and_complete,  # after the approval is injected; complete_task ends the turn
        next_task_write,  # the host auto-claims #2, which needs its own plan
        Reply(tool_calls=[Call("idle")]),
    ]})
    rt = make_runtime(workdir, model, allow=["Write(*)"])
    cleanup(rt)
    rec = Recorder(rt)
    first = rt.board.create("risky", "Write out.txt", require_plan=True)
    second = rt.board.create("also risky", "Write two.txt", blocked_by=[first.id],
                             require_plan=True)
    rt.team.spawn("alice", "coder")  # spawned WITHOUT require_plan

    rec.status("alice", "waiting_plan")
    (refused,) = results(model, "alice", "w1")
    assert refused.is_error and "plan approval required for task #1" in refused.content
    assert not (workdir / "out.txt").exists()  # the handler never ran
    req = rt.protocols.latest_plan("alice")
    assert (req.status, req.task_id) == ("pending", first.id)  # the host named the task
    assert req.task_claimed_at == rt.board.get(first.id).claimed_at
    block = rt.team.lead_inbox_block()
    assert f"for task #{first.id}" in block

    plans.review_plan(rt, "lead", req.id, True, "go")
    rec.wait_for(lambda: rt.board.get(second.id).status == "in_progress", what="second claim")
    assert rt.team.wait_quiet(WAIT)
    assert (workdir / "out.txt").read_text() == "x\n"
    assert rt.board.get(first.id).status == "completed"
    # the approval was for #1 only: #2 is closed again until a plan for it is approved
    (again,) = results(model, "alice", "w3")
    assert again.is_error and f"plan approval required for task #{second.id}" in again.content
    assert not (workdir / "two.txt").exists()
    assert "requires a plan" in model.requests_for("alice")[3].messages[-1].text()
    # told by the plan gate what to do, it is not reminded of complete_task
    assert not [n for n in rec.of("Notice", agent="alice") if "reminded" in n.text]
    assert "plan approval required for task #2" in rt.roster.get("alice").idle_reason
    model.assert_used_up()


def test_an_approval_binds_to_the_claim_and_a_task_less_plan_opens_nothing(workdir, cleanup):
    rt = make_runtime(workdir, ScriptedModel({}))
    cleanup(rt)
    task = rt.board.create("risky", require_plan=True)
    early = plans.submit_plan(rt, "bob", "a plan before holding anything")
    plans.review_plan(rt, "lead", early.id, True)
    assert early.task_id is None
    rt.board.claim(task.id, "bob")
    assert "plan approval required for task #1" in rt.team.plan_block("bob")

    req = plans.submit_plan(rt, "bob", "the plan for #1")
    assert "pending" in rt.team.plan_block("bob")
    plans.review_plan(rt, "lead", req.id, False, "no")
    assert "rejected" in rt.team.plan_block("bob")
    req = plans.submit_plan(rt, "bob", "a better plan for #1")
    plans.review_plan(rt, "lead", req.id, True)
    assert rt.team.plan_block("bob") is None

    # released and claimed again: a new claim, a new plan
    rt.board.release(task.id, "bob")
    rt.board.claim(task.id, "bob")
    assert "plan approval required for task #1" in rt.team.plan_block("bob")
    # someone else holding the same task cannot ride on bob's approval either
    rt.board.release(task.id, "bob")
    rt.board.claim(task.id, "carol")
    assert "plan approval required for task #1" in rt.team.plan_block("carol")


def test_a_plan_required_task_fails_closed_when_requests_json_is_unreadable(workdir, cleanup):
    rt = make_runtime(workdir, ScriptedModel({}))
    cleanup(rt)
    task = rt.board.create("risky", require_plan=True)
    rt.board.claim(task.id, "bob")
    req = plans.submit_plan(rt, "bob", "plan")
    plans.review_plan(rt, "lead", req.id, True)
    assert rt.team.plan_block("bob") is None
    (workdir / ".team" / "requests.json").write_text("{not json")
    try:
        why = rt.team.plan_block("bob")
    except Exception as exc:  # the gate turns a failing check into a refusal
        why = str(exc)
    assert why  # never open while the plan state cannot be read


def test_a_rejected_plan_for_a_task_given_up_does_not_block_other_work(workdir, cleanup):
    from support.team import complete_claimed

    model = ScriptedModel({"alice": [
        Reply(tool_calls=[Call("submit_plan", {"plan": "rm -rf everything"}), Call("idle")]),
        Reply(tool_calls=[Call("idle")]),  # after the rejection
        complete_claimed("did #2"),  # restarted: the host claims #2 for her
    ]})
    rt = make_runtime(workdir, model)
    cleanup(rt)
    rec = Recorder(rt)
    risky = rt.board.create("risky", require_plan=True)
    rt.team.spawn("alice", "coder")
    rec.status("alice", "waiting_plan")
    req = rt.protocols.latest_plan("alice")
    plans.review_plan(rt, "lead", req.id, False, "no")
    rec.wait_for(lambda: len(rec.of("TurnFinished", agent="alice")) == 2, what="rejection")
    assert "plan for task #1 rejected" in rt.team.plan_block("alice")  # names the task
    rt.team.request_shutdown("alice")
    rt.team.teammate("alice").thread.join(WAIT)
    assert rt.board.get(risky.id).status == "pending"  # released on the way out
    rt.board.update(risky.id, assignee="bob")
    other = rt.board.create("ordinary")
    rt.team.spawn("alice", "coder")
    rec.wait_for(lambda: rt.board.get(other.id).status == "completed", what="#2 done")
    assert rt.board.get(other.id).owner == "alice"
    assert rt.team.plan_block("alice") is None
    assert rt.team.wait_quiet(WAIT)
    model.assert_used_up()
