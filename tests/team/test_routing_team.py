"""Routing as the team sees it: the lead's create/update/claim tools, idle reasons that name
reserved tasks, and an assignee who is not running — marked on /tasks and told to the lead
once."""

from __future__ import annotations

from rich.console import Console
from support.team import Call, Recorder, Reply, make_runtime
from test_routing_plans import results

from agent_cli.models.scripted import ScriptedModel
from agent_cli.team.assignments import SENDER, marks, stranded
from agent_cli.ui import tables


def board_notes(rt) -> list[str]:
    return [m.content for m in rt.mail.peek("lead") if m.sender == SENDER]


def render(renderable) -> str:
    console = Console(width=160, color_system=None, record=True)
    console.print(renderable)
    return console.export_text()


def test_an_assignee_never_spawned_is_told_to_the_lead_once(workdir, cleanup):
    model = ScriptedModel({"lead": [
        Reply(tool_calls=[Call("create_task", {"subject": "notes", "assignee": "ghost",
                                               "require_plan": True})]),
        Reply("created"),
        Reply("second turn"),
    ]})
    rt = make_runtime(workdir, model)
    cleanup(rt)
    lead = rt.team.make_lead()
    lead.run_turn("make a task for ghost")
    assert board_notes(rt) == [
        "task #1 is assigned to ghost, who is not on the team: spawn that teammate, or "
        'reassign the task with update_task (assignee/role; "" clears it)'
    ]
    block = rt.team.lead_inbox_block()
    assert 'from="board"' in block and "ghost, who is not on the team" in block
    lead.run_turn(block)
    assert rt.mail.peek("lead") == []  # read, and not told again
    assert len(board_notes(rt)) == 0
    table = render(tables.tasks_table(rt.board.snapshot().tasks, [],
                                      {1: "assigned to ghost, who is not on the team"}))
    assert "@ghost +plan (assigned to ghost, who is not on the team)" in table


def test_a_shut_down_assignee_is_marked_and_reported_and_others_say_why_they_wait(
    workdir, cleanup
):
    model = ScriptedModel({"writer": [Reply(tool_calls=[Call("idle")])], "lead": [Reply("ok")]})
    rt = make_runtime(workdir, model)
    cleanup(rt)
    rec = Recorder(rt)
    first = rt.board.create("first")
    rt.board.claim(first.id, "someone")  # keeps #2 blocked, so writer cannot claim it yet
    mine = rt.board.create("writer's", assignee="writer", blocked_by=[first.id])
    rt.team.spawn("writer", "writer", prompt="hello")
    rt.team.spawn("reviewer", "reviewer")
    rec.wait_for(lambda: any("#2 is assigned to writer" in e.reason
                             for e in rec.of("StatusEvent", agent="reviewer", status="idle")),
                 what="reviewer's idle reason")
    rt.team.request_shutdown("writer")
    rec.status("writer", "shutdown")
    rt.team.teammate("writer").thread.join(10)
    assert marks(rt, rt.board.snapshot().tasks) == {
        mine.id: "assigned to writer, who is not running (shut down)"}
    block = rt.team.lead_inbox_block()  # a lead turn opens: the note is in this inbox
    assert "task #2 is assigned to writer, who is not running (shut down)" in block
    assert rt.team.lead_inbox_block() is None  # once
    rt.board.update(mine.id, assignee="reviewer")  # reassigned while pending
    assert marks(rt, rt.board.snapshot().tasks) == {}


def test_the_lead_tools_reassign_pending_refuse_in_progress_and_claims_say_whose(
    workdir, cleanup
):
    model = ScriptedModel({
        "lead": [
            Reply(tool_calls=[
                Call("create_task", {"subject": "a", "assignee": "writer"}, id="c1"),
                Call("create_task", {"subject": "b", "assignee": "bob", "role": "tester"},
                     id="c2"),
                Call("update_task", {"task_id": 1}, id="u0"),
                Call("update_task", {"task_id": 1, "assignee": "alice"}, id="u1"),
                Call("update_task", {"task_id": 1, "assignee": "Bad Name"}, id="u2"),
                Call("list_tasks", {}, id="l1"),
            ]),
            Reply("set up"),
            Reply(tool_calls=[Call("update_task", {"task_id": 1, "assignee": "bob"}, id="u3")]),
            Reply("done"),
        ],
        "bob": [Reply(tool_calls=[Call("claim_task", {"task_id": 1}, id="k1")]),
                Reply(tool_calls=[Call("idle", {})]),
                # after the auto-claim it keeps idling: reminded twice, then it goes idle
                *[Reply(tool_calls=[Call("idle", {})])] * 3],
    })
    rt = make_runtime(workdir, model)
    cleanup(rt)
    rec = Recorder(rt)
    rt.roster.add("bob", "coder")
    lead = rt.team.make_lead()
    lead.run_turn("set it up")
    (bad_pair,) = results(model, "lead", "c2")
    assert bad_pair.is_error and "bob's role is 'coder', not 'tester'" in bad_pair.content
    (empty,) = results(model, "lead", "u0")
    assert empty.is_error and "nothing to update" in empty.content
    (ok,) = results(model, "lead", "u1")
    assert not ok.is_error and "[assigned to alice]" in ok.content
    (bad,) = results(model, "lead", "u2")
    assert bad.is_error and "invalid assignee 'Bad Name'" in bad.content
    assert rt.board.get(1).assignee == "alice" and len(rt.board.snapshot().tasks) == 1
    (listing,) = results(model, "lead", "l1")
    assert "assigned to alice, who is not on the team" in listing.content

    rt.team.spawn("bob", "coder", prompt="claim #1")
    rec.wait_event("TurnFinished", agent="bob")
    (refused,) = results(model, "bob", "k1")
    assert refused.is_error and "task 1 is assigned to alice" in refused.content
    assert rt.board.get(1).status == "pending"

    rt.board.update(1, assignee="bob")
    rec.wait_for(lambda: rt.board.get(1).status == "in_progress", what="bob's auto-claim")
    lead.run_turn("reassign it")
    (late,) = results(model, "lead", "u3")
    assert late.is_error and "in_progress (owned by bob)" in late.content


def test_stranded_names_each_cause_and_leaves_takeable_tasks_alone(workdir):
    from agent_cli.board import TaskBoard
    from agent_cli.team.roster import Member

    board = TaskBoard(workdir / ".tasks")
    for kwargs in ({"assignee": "gone"}, {"assignee": "quit"}, {"assignee": "broke"},
                   {"assignee": "stale"}, {"assignee": "ok"}, {"role": "tester"},
                   {"role": "coder"}, {"assignee": "ok", "role": "docs"}, {}):
        board.create("t", **kwargs)
    board.create("held", assignee="quit")
    board.claim(10, "quit")  # in progress: nobody else needs to take it

    def member(name, role, status):
        return Member(name=name, role=role, status=status, updated_at="x")

    members = [member("quit", "w", "shutdown"), member("broke", "w", "failed"),
               member("stale", "w", "idle"), member("ok", "Coder", "working")]
    alive = {"ok"}
    got = stranded(board.snapshot().tasks, members, lambda m: m.name in alive)
    assert got == {
        1: "assigned to gone, who is not on the team",
        2: "assigned to quit, who is not running (shut down)",
        3: "assigned to broke, who is not running (failed)",
        4: "assigned to stale, who is not running (no live session runs it)",
        6: "for role 'tester', which no running teammate has",
        8: "assigned to ok, whose role is 'Coder', not 'docs'",
    }


def test_slash_tasks_marks_a_task_whose_assignee_is_not_running(workdir):
    from support.repl_harness import Harness

    rt = make_runtime(workdir, ScriptedModel({}))
    rt.board.create("notes", assignee="ghost", require_plan=True)
    rt.board.create("tests", role="tester")
    h = Harness(rt).start()
    try:
        out = h.command("/tasks", "Tasks")  # the table is printed as one block
    finally:
        h.quit()
        rt.close(2.0)
    assert "@ghost +plan (assigned to ghost, who is not on the team)" in out
    assert "role tester (for role 'tester', which no running teammate" in out
