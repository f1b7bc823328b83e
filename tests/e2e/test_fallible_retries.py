"""Patient, visible retries of model calls through the real SDK against the wire-level stub:
529 three times then success, 429 honouring retry-after, a model that never recovers (the
teammate fails, its task is released, the lead respawns it and it resumes its transcript),
Esc ending the lead's wait, and a failed lead turn leaving the conversation valid."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from support.e2e_claude import last_user_text
from support.fallible import (
    FAST_RETRY,
    Crew,
    assert_all_valid,
    complete,
    run_headless_json,
    wire_runtime,
)
from support.stub_server import Fault, Reply, StubServer, ToolUse

from agent_cli.events import RetryWait
from agent_cli.models.retry import RetryPolicy

WAIT = 10.0


@pytest.fixture
def stub() -> Iterator[StubServer]:
    with StubServer() as server:
        yield server


def waits_of(rt, agent: str) -> list[RetryWait]:
    got: list[RetryWait] = []
    rt.events.subscribe(lambda e: got.append(e) if isinstance(e, RetryWait)
                        and e.agent == agent else None)
    return got


def test_overloaded_three_times_then_success_is_retried_with_backoff(workdir, stub):
    faults = [Fault.overloaded(retry_after=None)] * 3  # no retry-after: our backoff decides

    def alice(body, turn):
        return faults.pop(0) if faults else complete(body, "done after 3 overloads")

    crew = Crew({"alice": alice})
    stub.responder = crew
    rt = wire_runtime(workdir, stub)
    waits = waits_of(rt, "alice")
    report, code, _ = _headless(rt)
    assert (report["outcome"], code) == ("completed", 0)
    alice = crew.requests_of(stub, "alice")
    assert len(alice) == 4 and alice[0] == alice[1] == alice[2] == alice[3]  # same request
    assert [(w.attempt, w.attempts, w.error_kind) for w in waits] == [
        (1, 8, "overloaded"), (2, 8, "overloaded"), (3, 8, "overloaded")]
    delays = [w.delay_s for w in waits]
    base, cap = FAST_RETRY.base_s, FAST_RETRY.cap_s
    for n, d in enumerate(delays, start=1):  # exponential, with jitter in [half, full]
        full = min(cap, base * 2 ** (n - 1))
        assert full / 2 <= d <= full
    assert waits[2].describe(now=waits[2].until - 4).startswith(
        "retrying in 4 s (overloaded, attempt 4/8)")
    assert report["teammate_errors"] == []
    assert_all_valid(stub, crew)


def test_rate_limited_waits_what_retry_after_says(workdir, stub):
    faults = [Fault.rate_limited(retry_after="0.25")]

    def alice(body, turn):
        return faults.pop(0) if faults else complete(body, "done after a 429")

    crew = Crew({"alice": alice})
    stub.responder = crew
    rt = wire_runtime(workdir, stub)
    waits = waits_of(rt, "alice")
    report, code, _ = _headless(rt)
    assert (report["outcome"], code) == ("completed", 0)
    assert [(w.delay_s, w.error_kind) for w in waits] == [(0.25, "rate_limited")]
    assert_all_valid(stub, crew)


def _headless(rt):
    import io
    import json
    from argparse import Namespace

    from agent_cli.ui.headless import run_headless

    out, err = io.StringIO(), io.StringIO()
    code = run_headless(rt, Namespace(prompt="go", wait=True, timeout=30,
                                      output_format="json"), out=out, err=err)
    return json.loads(out.getvalue()), code, err.getvalue()


def test_a_model_that_never_recovers_fails_the_teammate_and_a_respawn_resumes(workdir, stub):
    """8 overloaded answers: alice fails, her task goes back to pending, the lead hears it and
    respawns her with spawn_teammate; she resumes her transcript and completes the task."""

    def alice(body, turn):
        return Fault.overloaded(retry_after="0") if turn < 8 else complete(body, "second life")

    class Respawning(Crew):
        def lead_inbox(self, inbox):
            if 'type="error">alice failed' in inbox:
                return Reply("alice failed; restarting her.",
                             [ToolUse("spawn_teammate", {"name": "alice", "role": "worker"})])
            return Reply("alice finished on her second try.")

        def lead(self, body):
            from support.fallible import results

            if "spawn_teammate" in results(body) and "<inbox>" not in last_user_text(body):
                return Reply("Respawned." if self.seen["lead"] > 3 else "The team is on it.")
            return super().lead(body)

    crew = Respawning({"alice": alice})
    stub.responder = crew
    report, code, err = run_headless_json(workdir, stub)

    [failure] = report["teammate_errors"]
    assert failure["message"].startswith("alice failed: model error (overloaded)")
    assert "gave up after 8 attempts" in failure["message"]
    assert "task #1 released to pending" in failure["message"]
    released = [e for e in _board(workdir).events() if e["action"] == "released"]
    assert [(e["task_id"], e["details"]["owner"]) for e in released][:1] == [(1, "alice")]
    alice_reqs = crew.requests_of(stub, "alice")
    assert len(alice_reqs) == 9
    resumed = alice_reqs[8]
    claims = [t for m in resumed["messages"] for t in _texts(m) if "<auto-claimed-task" in t]
    assert len(claims) == 2  # her old claim from the transcript, and the new one
    assert (report["outcome"], code) == ("completed", 0)
    assert report["tasks"][0]["result"] == "second life"
    assert report["result"] == "alice finished on her second try."
    assert_all_valid(stub, crew)


def _texts(message):
    return [b.get("text", "") for b in message["content"] if b.get("type") == "text"]


def _board(workdir):
    from agent_cli.board.store import TaskBoard

    return TaskBoard(workdir / ".tasks")


def test_esc_ends_the_leads_retry_wait_at_once(workdir, stub):
    stub.push(Fault.overloaded(retry_after="60"))  # a wait far longer than the test
    rt = wire_runtime(workdir, stub, retry=RetryPolicy(budget_s=120))
    waiting = threading.Event()
    rt.events.subscribe(lambda e: waiting.set() if isinstance(e, RetryWait) else None)
    lead = rt.team.make_lead()
    box = {}
    turn = threading.Thread(target=lambda: box.update(r=lead.run_turn("hello")))
    turn.start()
    assert waiting.wait(WAIT)
    assert rt.retries.describe("lead").startswith("retrying in")
    lead.interrupt()  # what Esc does
    turn.join(WAIT)
    assert not turn.is_alive() and box["r"].stop_reason == "interrupted"
    assert len(stub.requests) == 1  # nothing was sent again
    assert rt.retries.describe("lead") == ""
    stub.push(Reply("Hi again."))
    assert lead.run_turn("are you there?").text == "Hi again."
    assert_all_valid(stub)
    rt.close(1.0)


def test_a_lead_turn_that_fails_leaves_the_conversation_valid(workdir, stub):
    stub.push(*[Fault.server_error(retry_after="0")] * 8, Reply("Back."))
    rt = wire_runtime(workdir, stub)
    lead = rt.team.make_lead()
    first = lead.run_turn("first question")
    assert first.stop_reason == "error" and first.error.kind == "overloaded"
    assert "gave up after 8 attempts" in str(first.error)
    second = lead.run_turn("second question")
    assert second.text == "Back."
    last = stub.requests[-1]["messages"]
    assert [m["role"] for m in last] == ["user"]  # both prompts in one valid user turn
    assert [b["text"] for b in last[0]["content"]] == ["first question", "second question"]
    assert_all_valid(stub)
    rt.close(1.0)


def test_the_sdk_does_not_retry_on_its_own(monkeypatch):
    """Retries are ours (visible, cancellable): the client we build never retries by
    itself, so each attempt above is one request on the wire."""
    from agent_cli.models.anthropic import make_client

    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    assert make_client().max_retries == 0


def test_a_wait_past_the_budget_or_a_final_answer_is_not_retried():
    from agent_cli.errors import AuthFailed, Overloaded
    from agent_cli.models.retry import Retrier

    cancel = threading.Event()
    seen = []
    retrier = Retrier(RetryPolicy(attempts=8, budget_s=5.0, base_s=0.001), cancel, seen.append)
    assert not retrier.wait(Overloaded("busy", retry_after=60))  # longer than the budget
    assert not retrier.wait(AuthFailed("bad key"))  # never worth a retry
    assert not retrier.wait(Overloaded("busy", retryable=False))  # x-should-retry: false
    assert seen == []
    assert retrier.wait(Overloaded("busy"))  # a plain overload is
    assert [i.attempt for i in seen] == [1]


def test_retry_settings_from_the_environment():
    from agent_cli.errors import UserError

    env = {"AGENT_CLI_RETRY_ATTEMPTS": "3", "AGENT_CLI_RETRY_BUDGET_S": "9.5",
           "AGENT_CLI_RETRY_BASE_S": "0.2"}
    assert RetryPolicy.from_env(env) == RetryPolicy(attempts=3, budget_s=9.5, base_s=0.2)
    assert RetryPolicy.from_env({}) == RetryPolicy(attempts=8, budget_s=90.0, base_s=1.0)
    for bad in ({"AGENT_CLI_RETRY_ATTEMPTS": "0"}, {"AGENT_CLI_RETRY_BASE_S": "-1"},
                {"AGENT_CLI_RETRY_BUDGET_S": "inf"}, {"AGENT_CLI_RETRY_BUDGET_S": "nan"}):
        with pytest.raises(UserError):
            RetryPolicy.from_env(bad)


def test_retry_after_headers_in_every_spelling_the_api_uses():
    import email.utils
    import time

    from agent_cli.models.retry import retry_after_s

    assert retry_after_s({"retry-after-ms": "1500"}) == 1.5
    assert retry_after_s({"retry-after": "7"}) == 7.0
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= retry_after_s({"retry-after": later}) <= 31
    assert retry_after_s({"retry-after": "soon"}) is None
    assert retry_after_s({}) is None
