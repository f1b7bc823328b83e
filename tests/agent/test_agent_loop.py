"""The turn loop with the scripted model: tool round trips, errors, limits, interrupts, hooks."""

from __future__ import annotations

import threading

import pytest
from support.agent import (
    WAIT,
    DenyWrites,
    Probe,
    assert_requests_valid,
    make_agent,
    results_of,
)

from agent_cli.agent import AgentSettings, PreCall
from agent_cli.errors import BadRequest, UserError
from agent_cli.events import (
    AgentError,
    TextDeltaEvent,
    TextDone,
    ToolFinished,
    ToolStarted,
    TurnFinished,
    UsageEvent,
)
from agent_cli.models.base import Message, ResponseDone, TextBlock, ToolUseBlock, Usage
from agent_cli.models.scripted import Call, Reply, ScriptedModel


def test_tool_round_trip_feeds_the_result_back(workdir):
    model = ScriptedModel(
        {
            "alice": [
                Reply("Let me check.", [Call("echo", {"text": "hello"})]),
                Reply("It says hello."),
            ]
        }
    )
    agent, rec = make_agent(workdir, model)

    result = agent.run_turn("what does echo say?")

    assert (result.stop_reason, result.text, result.rounds) == ("end_turn", "It says hello.", 2)
    second = model.requests[1].messages
    use = second[-2].tool_uses()[0]
    [answer] = results_of(second[-1])
    assert (answer.tool_use_id, answer.content, answer.is_error) == (use.id, "hello", False)
    assert [e.summary for e in rec.of(ToolStarted)] == ["hello"]
    assert [(e.ok, e.outcome) for e in rec.of(ToolFinished)] == [(True, "hello")]
    assert "".join(e.text for e in rec.of(TextDeltaEvent)) == "Let me check.It says hello."
    assert [e.text for e in rec.of(TextDone)] == ["Let me check.", "It says hello."]
    assert rec.of(TurnFinished)[-1].stop_reason == "end_turn"
    model.assert_used_up()
    assert_requests_valid(model)


def test_several_calls_in_one_response_are_all_answered_in_one_user_turn(workdir):
    probe = Probe()
    calls = [Call("echo", {"text": t}) for t in ("a", "b", "c")]
    model = ScriptedModel({"alice": [Reply("three at once", calls), Reply("done")]})
    agent, _ = make_agent(workdir, model, probe=probe)

    agent.run_turn("go")

    last = model.requests[1].messages[-1]
    assert last.role == "user"
    assert [r.content for r in results_of(last)] == ["a", "b", "c"]
    assert probe.ran == ["echo:a", "echo:b", "echo:c"]
    assert_requests_valid(model)


def test_bad_calls_become_error_results_and_the_loop_goes_on(workdir):
    model = ScriptedModel(
        {
            "alice": [
                Reply("", [Call("echo", {}), Call("boom"), Call("nope", {"x": 1})]),
                Reply("recovered"),
            ]
        }
    )
    agent, rec = make_agent(workdir, model)

    result = agent.run_turn("try things")

    assert result.stop_reason == "end_turn" and result.text == "recovered"
    invalid, crashed, unknown = results_of(model.requests[1].messages[-1])
    assert invalid.is_error and "invalid input for echo: text: Field required" in invalid.content
    assert crashed.is_error and "RuntimeError: disk on fire" in crashed.content
    assert unknown.is_error and "unknown tool 'nope'" in unknown.content
    assert [e.ok for e in rec.of(ToolFinished)] == [False, False, False]
    assert_requests_valid(model)


def test_gate_denial_is_a_result_and_the_handler_never_runs(workdir):
    probe = Probe()
    gate = DenyWrites()
    model = ScriptedModel(
        {
            "alice": [
                Reply("", [Call("write", {"path": "a.txt"}), Call("echo", {"text": "x"})]),
                Reply("ok"),
            ]
        }
    )
    agent, _ = make_agent(workdir, model, probe=probe, gate=gate)

    agent.run_turn("write it")

    denied, echoed = results_of(model.requests[1].messages[-1])
    assert denied.is_error and denied.content == "denied by user: not now"
    assert not echoed.is_error
    assert probe.ran == ["echo:x"]
    assert gate.checked == ["write", "echo"]
    assert_requests_valid(model)


def test_round_limit_stops_the_turn_and_the_next_turn_is_still_valid(workdir):
    looping = [Reply("again", [Call("echo", {"text": str(i)})]) for i in range(3)]
    model = ScriptedModel({"alice": [*looping, Reply("fine, stopping")]})
    agent, rec = make_agent(workdir, model, settings=AgentSettings(max_rounds=3))

    result = agent.run_turn("loop forever")

    assert (result.stop_reason, result.rounds) == ("max_rounds", 3)
    assert [e.error_kind for e in rec.of(AgentError)] == ["max_rounds"]
    assert len(model.requests) == 3

    assert agent.run_turn("please stop").stop_reason == "end_turn"
    last = model.requests[-1].messages[-1]
    assert results_of(last) and last.text() == "please stop"  # merged into one user turn
    assert_requests_valid(model)


def test_idle_tool_ends_the_turn_after_its_result_is_recorded(workdir):
    model = ScriptedModel({"alice": [Reply("nothing to do", [Call("idle")])]})
    agent, _ = make_agent(workdir, model)

    result = agent.run_turn("work")

    assert result.stop_reason == "idle"
    assert results_of(agent.conversation[-1])[0].content == "going idle"
    model.assert_used_up()


def test_model_error_ends_the_turn_typed_and_the_conversation_stays_usable(workdir):
    model = ScriptedModel(
        {
            "alice": [
                Reply("", [Call("echo", {"text": "x"})]),
                BadRequest("400 prompt is too long"),  # not worth a retry
                Reply("back"),
            ]
        }
    )
    agent, rec = make_agent(workdir, model)

    result = agent.run_turn("start")

    assert result.stop_reason == "error" and isinstance(result.error, BadRequest)
    assert [e.error_kind for e in rec.of(AgentError)] == ["bad_request"]
    assert agent.run_turn("retry").text == "back"
    assert_requests_valid(model)


def test_interrupt_during_the_model_stream(workdir):
    entered, release = threading.Event(), threading.Event()

    def slow(request):
        entered.set()
        release.wait(WAIT)
        return Reply("too late")

    model = ScriptedModel({"alice": [slow, Reply("fresh start")]})
    agent, _ = make_agent(workdir, model)
    outcome = {}
    worker = threading.Thread(target=lambda: outcome.update(r=agent.run_turn("think hard")))
    worker.start()
    assert entered.wait(WAIT)
    agent.interrupt()
    release.set()
    worker.join(WAIT)

    assert outcome["r"].stop_reason == "interrupted"
    assert agent.run_turn("never mind").text == "fresh start"  # cancel cleared for new turn
    assert model.requests[-1].messages[-1].text() == "think hardnever mind"
    assert_requests_valid(model)


def test_interrupt_during_a_tool_run_answers_every_call(workdir):
    probe = Probe()
    model = ScriptedModel(
        {
            "alice": [
                Reply("running", [Call("wait_cancel"), Call("echo", {"text": "later"})]),
                Reply("ok, stopped"),
            ]
        }
    )
    agent, _ = make_agent(workdir, model, probe=probe)
    outcome = {}
    worker = threading.Thread(target=lambda: outcome.update(r=agent.run_turn("run it")))
    worker.start()
    assert probe.started.wait(WAIT)
    agent.interrupt()
    worker.join(WAIT)

    assert outcome["r"].stop_reason == "interrupted"
    killed, skipped = results_of(agent.conversation[-1])
    assert killed.content == "process killed"
    assert skipped.is_error and skipped.content == "interrupted by the user"
    assert probe.ran == []  # the second call never ran
    agent.run_turn("what happened?")
    assert_requests_valid(model)


def test_pre_call_inject_merges_into_the_pending_user_turn(workdir):
    model = ScriptedModel({"alice": [Reply("", [Call("echo", {"text": "x"})]), Reply("seen")]})
    agent, _ = make_agent(workdir, model)
    hooks = iter([PreCall(inject=["<inbox>bob: hi</inbox>"]), PreCall(inject=["<inbox>2</inbox>"])])

    agent.run_turn(["task #3 is yours", "start now"], pre_call=lambda: next(hooks))

    first, second = model.requests
    assert len(first.messages) == 1
    assert [b.text for b in first.messages[0].content] == [
        "task #3 is yours",
        "start now",
        "<inbox>bob: hi</inbox>",
    ]
    assert second.messages[-1].text() == "<inbox>2</inbox>"
    assert results_of(second.messages[-1])  # same user turn as the tool results
    assert_requests_valid(model)


def test_pre_call_stop_ends_the_turn_before_the_next_model_call(workdir):
    model = ScriptedModel({"alice": [Reply("", [Call("echo", {"text": "x"})])]})
    agent, _ = make_agent(workdir, model)
    hooks = iter([None, PreCall(stop="shutdown requested")])

    result = agent.run_turn("work", pre_call=lambda: next(hooks))

    assert (result.stop_reason, result.rounds) == ("stopped", 1)
    assert len(model.requests) == 1
    model.assert_used_up()


def test_pause_turn_continues_without_new_user_input(workdir):
    model = ScriptedModel(
        {"alice": [Reply("searching...", stop_reason="pause_turn"), Reply("found it")]}
    )
    agent, _ = make_agent(workdir, model)

    result = agent.run_turn("search")

    assert (result.stop_reason, result.text, result.rounds) == ("end_turn", "found it", 2)
    assert_requests_valid(model)


class TruncatingModel:
    """Cut by max_tokens inside a tool call: first with text only, then after a complete call."""

    name = "truncating"

    def __init__(self) -> None:
        self.requests = []

    def stream(self, request, cancel=None):
        self.requests.append(request.model_copy(deep=True))
        n = len(self.requests)
        if n == 1:
            msg = Message(role="assistant", content=[TextBlock(text="Writing the file")])
            yield ResponseDone(msg, "max_tokens", Usage(input_tokens=5), "write_file")
        elif n == 2:
            use = ToolUseBlock(id="t1", name="echo", input={"text": "part 1"})
            msg = Message(role="assistant", content=[use])
            yield ResponseDone(msg, "max_tokens", Usage(input_tokens=5), "write_file")
        else:
            yield ResponseDone(
                Message(role="assistant", content=[TextBlock(text="ok")]), "end_turn"
            )


def test_max_tokens_inside_a_tool_call_continues_once_with_a_larger_budget(workdir):
    model = TruncatingModel()
    agent, rec = make_agent(workdir, model)

    result = agent.run_turn("write a big file")

    # the cut call never ran; the turn went on with a note and twice the max_tokens
    assert (result.stop_reason, result.text, result.rounds) == ("end_turn", "ok", 3)
    errors = rec.of(AgentError)
    assert [e.error_kind for e in errors] == ["max_tokens", "max_tokens"]
    assert "write_file; continuing" in errors[0].message
    assert [r.max_tokens for r in model.requests] == [8192, 16384, 16384]
    told = model.requests[1].messages[-1].text()
    assert "cut by max_tokens inside a call to write_file; that call did not run" in told
    assert "max_tokens 16384" in told
    # a complete call in a cut response still runs, and the loop goes on
    third = model.requests[2].messages[-1]
    assert results_of(third)[0].content == "part 1" and "did not run" in third.text()
    assert_requests_valid(model)


class CutTextModel:
    """Plain text cut by max_tokens on every request."""

    name = "cut-text"

    def __init__(self) -> None:
        self.requests = []

    def stream(self, request, cancel=None):
        self.requests.append(request.model_copy(deep=True))
        text = f"part {len(self.requests)} of a long answer"
        msg = Message(role="assistant", content=[TextBlock(text=text)])
        yield ResponseDone(msg, "max_tokens", Usage(input_tokens=5))


def test_text_cut_by_max_tokens_continues_once_then_stops(workdir):
    model = CutTextModel()
    agent, rec = make_agent(workdir, model)

    result = agent.run_turn("explain everything")

    assert (result.stop_reason, result.rounds) == ("max_tokens", 2)
    assert model.requests[1].messages[-1].text() == (
        "[cut by max_tokens: continue exactly where you stopped]"
    )
    assert [r.max_tokens for r in model.requests] == [8192, 8192]
    assert "stopping" in rec.of(AgentError)[-1].message
    # the next turn starts from a valid conversation
    agent.run_turn("shorter please")
    assert len(model.requests) == 4
    assert_requests_valid(model)


def test_usage_accumulates_and_is_reported_cumulatively(workdir):
    model = ScriptedModel(
        {
            "alice": [
                Reply(
                    "",
                    [Call("echo", {"text": "x"})],
                    usage=Usage(input_tokens=100, output_tokens=10),
                ),
                Reply("done", usage=Usage(input_tokens=120, output_tokens=5)),
            ]
        }
    )
    agent, rec = make_agent(workdir, model)

    agent.run_turn("count")

    assert [e.total_tokens for e in rec.of(UsageEvent)] == [110, 235]
    assert (agent.usage.input_tokens, agent.usage.output_tokens) == (220, 15)


def test_agents_on_parallel_threads_share_one_model_and_stay_valid(workdir):
    names = ["alice", "bob", "carol", "dave"]
    script = {
        n: [Reply("", [Call("echo", {"text": f"{n}-{i}"})]) for i in range(3)]
        + [Reply(f"{n} done")]
        for n in names
    }
    model = ScriptedModel(script)
    agents = [make_agent(workdir, model, name=n)[0] for n in names]
    results, barrier = {}, threading.Barrier(len(agents))

    def run(agent):
        barrier.wait(WAIT)
        results[agent.name] = agent.run_turn("go")

    threads = [threading.Thread(target=run, args=(a,)) for a in agents]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT)

    assert {n: r.text for n, r in results.items()} == {n: f"{n} done" for n in names}
    for agent in agents:  # nobody saw anybody else's tool results
        seen = [b.content for m in agent.conversation for b in results_of(m)]
        assert seen == [f"{agent.name}-{i}" for i in range(3)]
    model.assert_used_up()
    assert_requests_valid(model)


def test_blank_input_is_refused_and_changes_nothing(workdir):
    model = ScriptedModel({"alice": [Reply("hi")]})
    agent, _ = make_agent(workdir, model)
    agent.run_turn("hello")

    with pytest.raises(UserError, match="nothing to send"):
        agent.run_turn(["", "   "])

    assert [m.text() for m in agent.conversation] == ["hello", "hi"]
    assert len(model.requests) == 1
