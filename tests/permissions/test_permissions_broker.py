"""The approval broker with many asking threads: FIFO, one at a time, right answer to the
right thread, cancel, headless denial, detaching the UI."""

from __future__ import annotations

import threading

from agent_cli.permissions.broker import ApprovalAnswer, ApprovalBroker, ApprovalRequest

WAIT = 10.0


def request(agent: str, command: str) -> ApprovalRequest:
    return ApprovalRequest(agent=agent, tool="shell", input={"command": command}, summary=command)


def test_without_a_ui_a_request_is_denied_at_once():
    answer = ApprovalBroker().ask(request("alice", "ls"))
    assert answer.decision == "deny" and answer.source == "headless"


def test_many_threads_each_get_their_own_answer_in_fifo_order():
    broker = ApprovalBroker()
    queued = threading.Semaphore(0)
    broker.attach_ui(queued.release)
    results: dict[str, ApprovalAnswer] = {}
    names = [f"agent{i}" for i in range(8)]
    threads = []
    for name in names:
        # start the askers one after the other so the queue order is known
        t = threading.Thread(
            target=lambda n=name: results.__setitem__(n, broker.ask(request(n, n)))
        )
        t.start()
        assert queued.acquire(timeout=WAIT)
        threads.append(t)
    shown = []
    for _ in names:
        req = broker.next_request(timeout=WAIT)
        assert req is not None
        # one at a time: until it is answered, the UI is handed the same request
        assert broker.next_request(timeout=0).id == req.id
        shown.append(req.agent)
        kind = "allow_once" if int(req.agent[-1]) % 2 == 0 else "deny"
        assert broker.answer(req.id, ApprovalAnswer(kind, feedback=f"for {req.agent}"))
    for t in threads:
        t.join(WAIT)
    assert shown == names
    for name in names:
        expected = "allow_once" if int(name[-1]) % 2 == 0 else "deny"
        assert results[name].decision == expected
        assert results[name].feedback == f"for {name}"
    assert broker.next_request(timeout=0) is None


def test_concurrent_askers_from_many_threads_all_get_answered():
    broker = ApprovalBroker()
    broker.attach_ui()
    results: dict[int, str] = {}
    start = threading.Barrier(16)

    def asker(i: int) -> None:
        start.wait(WAIT)
        results[i] = broker.ask(request(f"a{i}", f"echo {i}")).feedback

    threads = [threading.Thread(target=asker, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for _ in range(16):
        req = broker.next_request(timeout=WAIT)
        assert req is not None
        broker.answer(req.id, ApprovalAnswer("allow_once", feedback=req.input["command"]))
    for t in threads:
        t.join(WAIT)
    assert results == {i: f"echo {i}" for i in range(16)}


def test_cancel_withdraws_a_waiting_request():
    broker = ApprovalBroker()
    queued = threading.Event()
    broker.attach_ui(queued.set)
    cancel = threading.Event()
    got: list[ApprovalAnswer] = []
    t = threading.Thread(target=lambda: got.append(broker.ask(request("bob", "ls"), cancel)))
    t.start()
    assert queued.wait(WAIT)
    req = broker.next_request(timeout=WAIT)
    cancel.set()
    t.join(WAIT)
    assert got[0].decision == "deny" and got[0].source == "interrupted"
    assert not broker.answer(req.id, ApprovalAnswer("allow_once"))  # too late: ignored
    assert broker.pending() == []


def test_detaching_the_ui_denies_everyone_still_waiting():
    broker = ApprovalBroker()
    queued = threading.Semaphore(0)
    broker.attach_ui(queued.release)
    got: list[ApprovalAnswer] = []
    threads = [
        threading.Thread(target=lambda i=i: got.append(broker.ask(request(f"x{i}", "ls"))))
        for i in range(3)
    ]
    for t in threads:
        t.start()
    for _ in threads:
        assert queued.acquire(timeout=WAIT)
    broker.detach_ui()
    for t in threads:
        t.join(WAIT)
    assert [a.source for a in got] == ["closed"] * 3
    # The session is ending: a late asker is told so, not that the run is headless.
    assert broker.ask(request("late", "ls")).source == "closed"


def test_a_failing_ui_hook_does_not_lose_the_request():
    broker = ApprovalBroker()

    def broken() -> None:
        raise RuntimeError("ui hook bug")

    broker.attach_ui(broken)
    got: list[ApprovalAnswer] = []
    t = threading.Thread(target=lambda: got.append(broker.ask(request("c", "ls"))))
    t.start()
    req = broker.next_request(timeout=WAIT)
    broker.answer(req.id, ApprovalAnswer("allow_always"))
    t.join(WAIT)
    assert got[0].decision == "allow_always"
