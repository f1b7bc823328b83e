"""Mailbox semantics on both backends (files, PostgreSQL): send/fetch/ack, redelivery,
cursors that never move back, refusals that write nothing, broadcast, stamps, wake-ups."""

from __future__ import annotations

import threading

import pytest
from support.race import Race
from support.team_backends import OPEN, TeamBackend

from agent_cli.errors import InvalidName, UserError
from agent_cli.wakeup import ChangeSignal


@pytest.fixture
def mail(team_backend: TeamBackend):
    return team_backend.mailbox()


def contents(messages) -> list[str]:
    return [m.content for m in messages]


def test_protocol_fields_are_stored_and_read_back(mail) -> None:
    mail.send("alice", "lead", "my plan", "plan_approval_request", request_id="r1", plan="1. x")
    mail.send("lead", "alice", "ok", "plan_approval_response", request_id="r1", approve=True)
    (req,) = mail.peek("lead")
    (resp,) = mail.peek("alice")
    assert (req.type, req.request_id, req.plan) == ("plan_approval_request", "r1", "1. x")
    assert (resp.type, resp.request_id, resp.approve) == ("plan_approval_response", "r1", True)
    assert (req.sender, req.to, len(req.id)) == ("alice", "lead", 32)


def test_fetch_then_ack_consumes_and_fetch_without_ack_redelivers(
    team_backend: TeamBackend, mail
) -> None:
    for text in ("one", "two"):
        mail.send("lead", "alice", text)
    first = mail.fetch("alice")
    assert contents(first.messages) == ["one", "two"]
    again = mail.fetch("alice")  # a crash before ack: everything comes back
    assert contents(again.messages) == ["one", "two"]
    assert again.cursor == first.cursor
    mail.send("bob", "alice", "three")  # arrives after the fetch, before the ack
    mail.ack("alice", first.cursor)
    after = mail.fetch("alice")
    assert contents(after.messages) == ["three"]
    mail.ack("alice", after.cursor)
    assert mail.fetch("alice").messages == []
    # a fresh mailbox (another process, a restart) sees the same acknowledged position
    assert team_backend.mailbox().fetch("alice").messages == []


def test_ack_never_moves_backwards(mail) -> None:
    mail.send("lead", "alice", "one")
    early = mail.fetch("alice").cursor
    mail.send("lead", "alice", "two")
    late = mail.fetch("alice").cursor
    mail.ack("alice", late)
    mail.ack("alice", early)  # a slow reader's stale ack
    assert mail.cursor("alice") == late
    assert mail.fetch("alice").messages == []


@pytest.mark.parametrize("cursor", [-1, 10_000, 5, "12", True, 1.5])
def test_bad_ack_is_refused_and_changes_nothing(mail, cursor) -> None:
    mail.send("lead", "alice", "one")
    mail.send("lead", "alice", "two")
    with pytest.raises(UserError):
        mail.ack("alice", cursor)
    assert mail.cursor("alice") == 0
    assert contents(mail.fetch("alice").messages) == ["one", "two"]


def test_peek_consumes_nothing(mail) -> None:
    mail.send("lead", "alice", "hello")
    assert contents(mail.peek("alice")) == ["hello"]
    assert contents(mail.peek("alice")) == ["hello"]
    assert mail.cursor("alice") == 0


@pytest.mark.parametrize(
    "name", ["../x", "/etc", "", "Alice", "a\x00b", "x" * 40, "a/b", ".", "-x", None, 7]
)
def test_hostile_names_are_refused_before_anything_is_stored(mail, name) -> None:
    for call in (
        lambda: mail.send("lead", name, "hi"),
        lambda: mail.send(name, "alice", "hi"),
        lambda: mail.fetch(name),
        lambda: mail.ack(name, 0),
        lambda: mail.peek(name),
        lambda: mail.stamp(name),
        lambda: mail.broadcast("lead", "hi", ["alice", name]),
    ):
        with pytest.raises(InvalidName, match="invalid"):
            call()
    assert mail.peek("alice") == [] and mail.stamp("alice") == (0, 0)


@pytest.mark.parametrize(
    "kwargs, reason",
    [
        ({"type": "gossip"}, "unknown message type"),
        ({"type": "shutdown_request"}, "needs a request_id"),
        ({"type": "shutdown_response", "request_id": "r"}, "needs approve"),
        ({"type": "message", "request_id": "r"}, "cannot carry"),
        ({"content": None}, "must be text"),
    ],
)
def test_invalid_messages_are_refused_and_nothing_is_written(mail, kwargs, reason) -> None:
    args = {"content": "hi", **kwargs}
    with pytest.raises(UserError, match=reason):
        mail.send("lead", "alice", args.pop("content"), **args)
    assert mail.peek("alice") == [] and mail.stamp("alice") == (0, 0)


def test_broadcast_reaches_everyone_but_the_sender_once(mail) -> None:
    sent = mail.broadcast("alice", "standup", ["lead", "alice", "bob", "bob"])
    assert [m.to for m in sent] == ["lead", "bob"]
    assert [m.type for m in mail.peek("bob")] == ["broadcast"]
    assert mail.peek("alice") == []


def test_stamp_changes_on_every_send_and_is_zero_without_an_inbox(mail) -> None:
    assert mail.stamp("alice") == (0, 0)
    mail.send("lead", "alice", "one")
    first = mail.stamp("alice")
    mail.send("lead", "alice", "two")
    second = mail.stamp("alice")
    assert len({(0, 0), first, second}) == 3
    mail.ack("alice", mail.fetch("alice").cursor)
    assert mail.stamp("alice") == second  # reading is not a change of the inbox
    assert mail.stamp("bob") == (0, 0)


def test_a_send_wakes_a_waiting_thread_through_on_change(team_backend: TeamBackend) -> None:
    signal = ChangeSignal()
    mail = team_backend.mailbox(on_change=signal.notify)
    ready = threading.Event()
    woke: list[tuple[bool, list[str]]] = []

    def waiter() -> None:
        since = signal.generation
        ready.set()
        changed = signal.wait(since, timeout=10) != since  # False only on timeout
        woke.append((changed, contents(mail.peek("alice"))))

    t = threading.Thread(target=waiter)
    t.start()
    assert ready.wait(5)
    mail.send("lead", "alice", "wake up")
    t.join(10)
    assert woke == [(True, ["wake up"])]


SENDER = OPEN + """
import sys
mail = stores(sys.argv[1])[0]
who, n = sys.argv[2], int(sys.argv[3])
print("ready", flush=True)
sys.stdin.readline()
for i in range(n):
    mail.send(who, "lead", f"{who}:{i}")
print("done", flush=True)
"""


def test_threads_and_processes_sending_at_once_lose_and_duplicate_nothing(
    team_backend: TeamBackend,
) -> None:
    n = 30
    race = Race()
    for i in range(3):
        race.process(f"proc{i}", SENDER, team_backend.spec, f"proc{i}", str(n))
    mail = team_backend.mailbox()

    def sender(who: str) -> None:
        for i in range(n):
            mail.send(who, "lead", f"{who}:{i}")

    for i in range(6):
        race.thread(sender, f"thread{i}")
    race.go()
    assert [out.strip() for out in race.finish().values()] == ["done"] * 3
    got = mail.fetch("lead")
    assert got.problems == [] and len(got.messages) == 9 * n
    assert len({m.id for m in got.messages}) == 9 * n
    per_sender: dict[str, list[int]] = {}
    for m in got.messages:
        who, i = m.content.split(":")
        assert m.sender == who
        per_sender.setdefault(who, []).append(int(i))
    assert per_sender == {w: list(range(n)) for w in per_sender} and len(per_sender) == 9
    mail.ack("lead", got.cursor)
    assert mail.fetch("lead").messages == []
