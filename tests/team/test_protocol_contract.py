"""Protocol requests on both backends (files, PostgreSQL): stored pending, every matching
rule, expiry, idempotence, and racing responses from threads and processes."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from support.race import Race
from support.team_backends import OPEN, Clock, TeamBackend

from agent_cli.errors import InvalidName, NotFound, Refused, UserError
from agent_cli.team.protocol import RequestExpired


@pytest.fixture
def store(team_backend: TeamBackend, clock: Clock):
    return team_backend.protocols(clock)


def test_create_stores_a_pending_request_with_a_five_minute_window(
    team_backend: TeamBackend, store
) -> None:
    req = store.create("shutdown", "lead", "alice", "please stop")
    (entry,) = team_backend.protocols().load()  # another reader sees it
    assert entry == req and len(req.id) == 32
    assert (entry.kind, entry.sender, entry.target) == ("shutdown", "lead", "alice")
    assert entry.status == "pending" and entry.resolution is None
    assert entry.created_at == "2026-03-01T12:00:00.000Z"
    assert entry.expires_at == "2026-03-01T12:05:00.000Z"
    assert store.get(req.id) == req
    assert store.pending(kind="shutdown", target="alice") == [req]
    assert store.pending(kind="plan_approval") == [] and store.pending(target="bob") == []


def test_a_matching_response_resolves_once(store) -> None:
    req = store.create("shutdown", "lead", "alice")
    done = store.resolve(req.id, "shutdown", "alice", "lead", True, "bye", response_id="m1")
    assert (done.status, done.resolution, done.response_id) == ("approved", "bye", "m1")
    assert store.get(req.id).status == "approved"
    assert store.pending() == []
    plan = store.create("plan_approval", "alice", "lead", "1. write tests")
    rejected = store.resolve(plan.id, "plan_approval", "lead", "alice", False, "too vague")
    assert rejected.status == "rejected"


@pytest.mark.parametrize(
    "kind, responder, recipient, reason",
    [
        ("plan_approval", "alice", "lead", "is a shutdown request, not plan_approval"),
        ("shutdown", "bob", "lead", "is for alice, not bob"),
        ("shutdown", "alice", "bob", "came from lead, so the answer goes to lead, not bob"),
        ("telepathy", "alice", "lead", "not telepathy"),
    ],
)
def test_mismatched_responses_are_refused_logged_and_change_nothing(
    team_backend: TeamBackend, store, kind: str, responder: str, recipient: str, reason: str
) -> None:
    req = store.create("shutdown", "lead", "alice")
    before = store.load()
    with pytest.raises(Refused, match=reason) as info:
        store.resolve(req.id, kind, responder, recipient, True, response_id="m1")
    assert str(info.value).startswith(f"request {req.id[:8]}...")
    assert store.load() == before
    last = team_backend.protocol_log(store)[-1]
    assert last["outcome"] == "rejected" and reason in last["reason"]
    assert last["request_id"] == req.id and last["responder"] == responder


def test_unknown_request_is_refused(store) -> None:
    store.create("shutdown", "lead", "alice")
    before = store.load()
    with pytest.raises(Refused, match="no protocol request deadbeef"):
        store.resolve("deadbeef" * 4, "shutdown", "alice", "lead", True)
    with pytest.raises(NotFound):
        store.get("deadbeef" * 4)
    assert store.load() == before


def test_expired_request_is_refused_and_no_longer_pending(store, clock: Clock) -> None:
    req = store.create("shutdown", "lead", "alice", ttl_s=60)
    clock.now += timedelta(seconds=59.999)
    assert store.pending() == [req] and not store.has_expired(req)
    clock.now += timedelta(milliseconds=1)  # the window is [created_at, expires_at)
    assert store.pending() == [] and store.has_expired(req)
    with pytest.raises(RequestExpired, match="expired at 2026-03-01T12:01:00.000Z"):
        store.resolve(req.id, "shutdown", "alice", "lead", True, response_id="m1")
    assert store.get(req.id).status == "pending"


def test_same_response_redelivered_is_idempotent_another_is_a_duplicate(
    team_backend: TeamBackend, store, clock: Clock
) -> None:
    req = store.create("plan_approval", "alice", "lead", "plan")
    first = store.resolve(req.id, "plan_approval", "lead", "alice", True, "ok", response_id="m1")
    after_first = store.load()
    clock.now += timedelta(hours=1)  # even after expiry, a redelivery is recognised
    again = store.resolve(req.id, "plan_approval", "lead", "alice", True, "ok", response_id="m1")
    assert again == first
    with pytest.raises(Refused, match="is already approved"):
        store.resolve(req.id, "plan_approval", "lead", "alice", False, "no", response_id="m2")
    with pytest.raises(Refused, match="is already approved"):
        store.resolve(req.id, "plan_approval", "lead", "alice", True)  # no response id
    assert store.load() == after_first
    outcomes = [r["outcome"] for r in team_backend.protocol_log(store)]
    assert outcomes == ["created", "accepted", "redelivered", "rejected", "rejected"]


def test_a_redelivery_from_the_wrong_party_is_still_refused(store) -> None:
    req = store.create("shutdown", "lead", "alice")
    store.resolve(req.id, "shutdown", "alice", "lead", True, response_id="m1")
    with pytest.raises(Refused, match="is for alice, not bob"):
        store.resolve(req.id, "shutdown", "bob", "lead", True, response_id="m1")


def test_latest_plan_is_the_last_created_for_that_teammate(store) -> None:
    assert store.latest_plan("alice") is None
    first = store.create("plan_approval", "alice", "lead", "v1")
    store.resolve(first.id, "plan_approval", "lead", "alice", True)
    store.create("plan_approval", "bob", "lead", "bob's")
    second = store.create("plan_approval", "alice", "lead", "v2")  # same clock tick
    latest = store.latest_plan("alice")
    assert latest.id == second.id and latest.status == "pending"


def test_close_pending_approves_the_targets_live_requests_but_the_skipped(
    store, clock: Clock
) -> None:
    old = store.create("shutdown", "lead", "alice", ttl_s=10)
    clock.now += timedelta(seconds=20)  # expired: left as it is
    kept = store.create("shutdown", "lead", "alice")
    closed_one = store.create("shutdown", "lead", "alice")
    other = store.create("shutdown", "lead", "bob")
    closed = store.close_pending("shutdown", "alice", "alice is down", skip=kept.id)
    assert [r.id for r in closed] == [closed_one.id]
    assert closed[0].status == "approved" and closed[0].resolution == "alice is down"
    assert {r.id for r in store.pending()} == {kept.id, other.id}
    assert store.get(old.id).status == "pending" and store.has_expired(store.get(old.id))


@pytest.mark.parametrize(
    "args, error",
    [
        (("reboot", "lead", "alice"), UserError),
        (("shutdown", "lead", "lead"), UserError),
        (("shutdown", "../lead", "alice"), InvalidName),
        (("shutdown", "lead", "Alice"), InvalidName),
        (("shutdown", "lead", "alice", "", 0), UserError),
        (("shutdown", "lead", "alice", "", float("nan")), UserError),
    ],
)
def test_bad_create_is_refused_and_nothing_is_written(store, args, error) -> None:
    with pytest.raises(error):
        store.create(*args)
    assert store.load() == []


RESOLVER = OPEN + """
import sys
from agent_cli.errors import Refused
store = stores(sys.argv[1])[2]
print("ready", flush=True)
sys.stdin.readline()
try:
    store.resolve(sys.argv[2], "shutdown", "alice", "lead", True, response_id=sys.argv[3])
    print("won")
except Refused as exc:
    print("refused", exc)
"""


def test_racing_responses_from_threads_and_processes_resolve_exactly_once(
    team_backend: TeamBackend,
) -> None:
    store = team_backend.protocols()
    req = store.create("shutdown", "lead", "alice")
    race = Race()
    for i in range(3):
        race.process(f"proc{i}", RESOLVER, team_backend.spec, req.id, f"proc{i}")
    outcomes: list[str] = []

    def respond(i: int) -> None:
        try:
            store.resolve(req.id, "shutdown", "alice", "lead", True, response_id=f"thread{i}")
            outcomes.append("won")
        except Refused as exc:
            outcomes.append(f"refused {exc}")

    for i in range(8):
        race.thread(respond, i)
    race.go()
    outcomes += [out.strip() for out in race.finish().values()]
    assert len(outcomes) == 11
    assert outcomes.count("won") == 1
    assert all("already approved" in o for o in outcomes if o != "won")
    winner = store.get(req.id).response_id
    assert winner.startswith(("thread", "proc"))


def test_concurrent_creates_are_all_kept(team_backend: TeamBackend) -> None:
    store = team_backend.protocols()
    made: list[str] = []
    lock = threading.Lock()

    def create(i: int) -> None:
        for _ in range(10):
            req = store.create("shutdown", "lead", f"t{i}")
            with lock:
                made.append(req.id)

    threads = [threading.Thread(target=create, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(r.id for r in team_backend.protocols().load()) == sorted(made)
    assert len(made) == 80
