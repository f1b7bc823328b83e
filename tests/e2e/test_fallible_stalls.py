"""A held task is never silently stuck: a teammate that forgets complete_task, calls idle
while holding its task, or is cut by max_tokens is reminded (bounded), and the lead and the
headless outcome hear what happened. Real SDK, wire-level stub, one test per misbehaviour;
each checks the board, the lead's inbox, the JSON outcome, the exit code and that every
request was one the API accepts."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from support.e2e_claude import claimed_task, last_user_text
from support.fallible import (
    Crew,
    assert_all_valid,
    complete,
    error_of,
    results,
    run_headless_json,
)
from support.stub_server import Reply, StubServer, ToolUse

WAIT = 10.0


@pytest.fixture
def stub() -> Iterator[StubServer]:
    with StubServer() as server:
        yield server


def lead_inbox(crew: Crew, stub: StubServer) -> str:
    """The lead's last request's inbox text (its follow-up turn)."""
    return last_user_text(crew.requests_of(stub, "lead")[-1])


def test_a_teammate_that_forgets_complete_task_is_reminded_twice_then_reported(workdir, stub):
    crew = Crew({"alice": lambda body, turn: Reply(f"I did task A (turn {turn}).")})
    stub.responder = crew
    report, code, err = run_headless_json(workdir, stub)

    alice = crew.requests_of(stub, "alice")
    assert len(alice) == 3  # its turn, then one turn per reminder, then nothing more
    task_id, token = claimed_task(alice[0])
    for n, body in enumerate(alice[1:], start=1):
        reminder = last_user_text(body)
        assert f'<host-reminder task_id="{task_id}" n="{n}" of="2">' in reminder
        assert f"claim_token {token}" in reminder
        assert "complete_task" in reminder and "send_message to the lead" in reminder
    said = 'alice ended 3 turns without completing #1 "A"; it stays in progress with alice'
    assert said in lead_inbox(crew, stub)  # the lead's follow-up turn read the report
    assert report["outcome"] == "unfinished" and code == 1
    assert report["unfinished"] == [{"id": 1, "subject": "A", "status": "pending",
                                     "owner": "alice", "reason": said}]
    assert report["tasks"][0]["status"] == "pending"  # the board after the shutdown
    warnings = [x for x in err.splitlines() if x.startswith("agent-cli: warning:")]
    assert [x for x in err.splitlines() if x not in warnings] == [
        f'agent-cli: unfinished #1 "A" (pending, alice): {said}']
    assert "reminded to finish #1" in warnings[0] and "ended 3 turns" in warnings[-1]
    assert_all_valid(stub, crew)


def test_a_reminder_that_is_heeded_completes_the_task(workdir, stub):
    def alice(body, turn):
        return Reply("Done, I think.") if turn == 0 else complete(body, "done after a nudge")

    crew = Crew({"alice": alice})
    stub.responder = crew
    report, code, err = run_headless_json(workdir, stub)
    warnings = [x for x in err.splitlines() if x.startswith("agent-cli: warning:")]
    assert (report["outcome"], code) == ("completed", 0)
    assert err.splitlines() == warnings and "reminded to finish #1" in err  # the reminder only
    assert report["tasks"][0]["result"] == "done after a nudge"
    assert report["unfinished"] == []
    assert "ended" not in lead_inbox(crew, stub)  # no stall report, only the result
    assert_all_valid(stub, crew)


def test_idle_while_holding_answers_with_the_reminder_instead(workdir, stub):
    def alice(body, turn):
        if turn == 0:
            return Reply("Going idle.", [ToolUse("idle", {})])
        assert "idle" in results(body)
        return complete(body, "completed after the idle reminder")

    crew = Crew({"alice": alice})
    stub.responder = crew
    report, code, _ = run_headless_json(workdir, stub)

    second = crew.requests_of(stub, "alice")[1]
    answer = results(second)["idle"]
    _, token = claimed_task(second)
    text = answer["content"] if isinstance(answer["content"], str) else str(answer["content"])
    assert text.startswith("not idle yet:") and f"claim_token {token}" in text
    assert (report["outcome"], code) == ("completed", 0)
    assert_all_valid(stub, crew)


def test_idle_every_time_uses_both_reminders_then_goes_idle_and_is_reported(workdir, stub):
    crew = Crew({"alice": lambda body, turn: Reply("", [ToolUse("idle", {})])})
    stub.responder = crew
    report, code, _ = run_headless_json(workdir, stub)
    alice = crew.requests_of(stub, "alice")
    assert len(alice) == 3  # idle -> reminder 1, idle -> reminder 2, idle -> idle
    assert [results(b)["idle"]["content"].startswith("not idle yet") for b in alice[1:]] == [
        True, True]
    assert report["outcome"] == "unfinished" and code == 1
    assert "ended 3 turns without completing #1" in report["unfinished"][0]["reason"]
    assert "ended 3 turns without completing #1" in lead_inbox(crew, stub)
    assert_all_valid(stub, crew)


def test_max_tokens_inside_a_tool_call_continues_with_a_larger_budget(workdir, stub):
    def alice(body, turn):
        if turn == 0:
            return Reply("Completing.", [ToolUse("complete_task", '{"task_id": 1, "claim')],
                         stop_reason="max_tokens")
        assert "cut by max_tokens inside a call to complete_task" in last_user_text(body)
        return complete(body, "sent whole the second time")

    crew = Crew({"alice": alice})
    stub.responder = crew
    report, code, _ = run_headless_json(workdir, stub)
    alice_reqs = crew.requests_of(stub, "alice")
    assert [b["max_tokens"] for b in alice_reqs] == [8192, 16384]
    assert (report["outcome"], code) == ("completed", 0)
    assert report["tasks"][0]["result"] == "sent whole the second time"
    assert_all_valid(stub, crew)


def test_max_tokens_in_plain_text_continues_exactly_where_it_stopped(workdir, stub):
    def alice(body, turn):
        if turn == 0:
            return Reply("Let me explain at length what I", stop_reason="max_tokens")
        assert last_user_text(body) == "[cut by max_tokens: continue exactly where you stopped]"
        return complete(body, "finished after the cut")

    crew = Crew({"alice": alice})
    stub.responder = crew
    report, code, _ = run_headless_json(workdir, stub)
    assert len(crew.requests_of(stub, "alice")) == 2
    assert (report["outcome"], code) == ("completed", 0)
    assert_all_valid(stub, crew)


def test_a_wrong_claim_token_then_the_right_one(workdir, stub):
    def alice(body, turn):
        if turn == 0:
            return complete(body, "trust me", token="0" * 32)
        assert "wrong claim_token for task 1" in error_of(body, "complete_task")
        return complete(body, "with the real token")

    crew = Crew({"alice": alice})
    stub.responder = crew
    report, code, _ = run_headless_json(workdir, stub)
    assert (report["outcome"], code) == ("completed", 0)
    assert report["tasks"][0]["result"] == "with the real token"
    assert_all_valid(stub, crew)


def test_complete_task_on_someone_elses_task_is_refused(workdir, stub):
    bob_holds, alice_tried = threading.Event(), threading.Event()

    def alice(body, turn):
        own, token = claimed_task(body)
        other = 3 - own
        if turn == 0:
            assert bob_holds.wait(WAIT)
            return Reply(tool_calls=[ToolUse("complete_task", {
                "task_id": other, "claim_token": token, "result": "I did yours too"})])
        alice_tried.set()
        assert f"task {other} is not yours to complete (owned by bob)" in error_of(
            body, "complete_task")
        return complete(body, "alice's own")

    def bob(body, turn):
        bob_holds.set()
        assert alice_tried.wait(WAIT)
        return complete(body, "bob's own")

    crew = Crew({"alice": alice, "bob": bob}, tasks=[{"subject": "A"}, {"subject": "B"}])
    stub.responder = crew
    report, code, _ = run_headless_json(workdir, stub)
    assert (report["outcome"], code) == ("completed", 0)
    by_owner = {t["owner"]: t["result"] for t in report["tasks"]}
    assert by_owner == {"alice": "alice's own", "bob": "bob's own"}
    assert_all_valid(stub, crew)


def test_a_completed_task_ends_the_turn_and_the_next_task_opens_one_message(workdir, stub):
    crew = Crew({"alice": lambda body, turn: complete(body, f"did it ({turn})")},
                tasks=[{"subject": "A"}, {"subject": "B"}, {"subject": "C"}])
    stub.responder = crew
    report, code, _ = run_headless_json(workdir, stub)
    alice = crew.requests_of(stub, "alice")
    assert len(alice) == 3  # one model request per task: no closing-text request
    for body in alice[1:]:
        last = body["messages"][-1]
        kinds = [b["type"] for b in last["content"]]
        assert kinds == ["tool_result", "text"]  # the result, then the next task, one message
        assert "completed" in str(last["content"][0]["content"])
        assert last["content"][1]["text"].startswith("<auto-claimed-task")
    assert (report["outcome"], code) == ("completed", 0)
    assert_all_valid(stub, crew)
