"""The stub's per-request responder, which the Claude end-to-end tests route agents with."""

from __future__ import annotations

import anthropic
import pytest
from support.e2e_claude import claimed_task, last_user_text, system_text
from support.stub_server import Fault, Reply, StubServer

BODY = {"model": "m", "max_tokens": 50, "messages": [{"role": "user", "content": "hi"}]}


def client(stub: StubServer) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=stub.url, api_key="test", max_retries=0)


def test_the_queue_goes_first_then_the_responder_decides_from_the_request():
    def responder(body: dict) -> Reply:
        return Reply(f"system was {system_text(body)!r}, user said {last_user_text(body)!r}")

    with StubServer(responder=responder) as stub:
        stub.push(Reply("queued"))
        first = client(stub).messages.create(**BODY, system="S")
        second = client(stub).messages.create(**BODY, system="S")
    assert first.content[0].text == "queued"
    assert second.content[0].text == "system was 'S', user said 'hi'"
    assert [usage["input_tokens"] > 0 for _, usage in stub.served] == [True, True]


def test_a_failing_responder_is_a_500_the_sdk_does_not_retry_and_is_recorded():
    def responder(body: dict) -> Reply:
        raise AssertionError("no such agent")

    with StubServer(responder=responder) as stub:
        with pytest.raises(anthropic.InternalServerError):
            anthropic.Anthropic(base_url=stub.url, api_key="test").messages.create(**BODY)
    assert stub.responder_errors == ["AssertionError: no such agent"]
    assert len(stub.requests) == 1 and stub.served == []


def test_a_responder_fault_is_sent_as_the_api_would():
    with StubServer(responder=lambda body: Fault.auth()) as stub:
        with pytest.raises(anthropic.AuthenticationError):
            client(stub).messages.create(**BODY)


def test_claimed_task_reads_the_latest_auto_claim_block():
    block = '<auto-claimed-task id="{}" claim_token="{}">\nSubject: x\n</auto-claimed-task>'
    body = {
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": block.format(1, "aa11")}]},
            {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
            {"role": "user", "content": [{"type": "text", "text": block.format(2, "bb22")}]},
        ]
    }
    assert claimed_task(body) == (2, "bb22")
    assert claimed_task({"messages": body["messages"][:1]}) == (1, "aa11")
    assert claimed_task({"messages": [{"role": "user", "content": "hi"}]}) is None
