"""Protocol requests: stored pending, every matching rule, expiry, idempotence, contention."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from support.race import Race

from agent_cli.errors import CorruptFile, InvalidName, NotFound, Refused, UserError
from agent_cli.team.protocol import ProtocolStore, kind_of


class Clock:
    """A settable UTC clock, so expiry is reached without waiting."""

    def __init__(self) -> None:
        self.now = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(workdir: Path, clock: Clock) -> ProtocolStore:
    return ProtocolStore(workdir / ".team", clock=clock)


def log_records(store: ProtocolStore) -> list[dict]:
    return [json.loads(line) for line in store.log_path.read_text().splitlines()]


def test_create_stores_a_pending_request_with_a_five_minute_window(store: ProtocolStore) -> None:
    req = store.create("shutdown", "lead", "alice", "please stop")
    on_disk = json.loads(store.path.read_text())
    assert on_disk["version"] == 1
    (entry,) = on_disk["requests"]
    assert entry["id"] == req.id and len(req.id) == 32
    assert (entry["kind"], entry["sender"], entry["target"]) == ("shutdown", "lead", "alice")
    assert entry["status"] == "pending" and entry["resolution"] is None
    assert entry["created_at"] == "2026-03-01T12:00:00.000Z"
    assert entry["expires_at"] == "2026-03-01T12:05:00.000Z"
    assert store.get(req.id) == req
    assert store.pending(kind="shutdown", target="alice") == [req]


def test_a_matching_response_resolves_once(store: ProtocolStore) -> None:
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
    store: ProtocolStore, kind: str, responder: str, recipient: str, reason: str
) -> None:
    req = store.create("shutdown", "lead", "alice")
    before = store.path.read_bytes()
    with pytest.raises(Refused, match=reason) as info:
        store.resolve(req.id, kind, responder, recipient, True, response_id="m1")
    assert str(info.value).startswith(f"request {req.id[:8]}...")
    assert store.path.read_bytes() == before
    last = log_records(store)[-1]
    assert last["outcome"] == "rejected" and reason in last["reason"]
    assert last["request_id"] == req.id and last["responder"] == responder


def test_unknown_request_is_refused(store: ProtocolStore) -> None:
    store.create("shutdown", "lead", "alice")
    before = store.path.read_bytes()
    with pytest.raises(Refused, match="no protocol request deadbeef"):
        store.resolve("deadbeef" * 4, "shutdown", "alice", "lead", True)
    with pytest.raises(NotFound):
        store.get("deadbeef" * 4)
    assert store.path.read_bytes() == before


def test_expired_request_is_refused_and_no_longer_pending(
    store: ProtocolStore, clock: Clock
) -> None:
    req = store.create("shutdown", "lead", "alice", ttl_s=60)
    clock.now += timedelta(seconds=59.999)
    assert store.pending() == [req]
    clock.now += timedelta(milliseconds=1)  # the window is [created_at, expires_at)
    assert store.pending() == []
    with pytest.raises(Refused, match="expired at 2026-03-01T12:01:00.000Z"):
        store.resolve(req.id, "shutdown", "alice", "lead", True, response_id="m1")
    assert store.get(req.id).status == "pending"


def test_same_response_redelivered_is_idempotent_another_is_a_duplicate(
    store: ProtocolStore, clock: Clock
) -> None:
    req = store.create("plan_approval", "alice", "lead", "plan")
    first = store.resolve(req.id, "plan_approval", "lead", "alice", True, "ok", response_id="m1")
    after_first = store.path.read_bytes()
    clock.now += timedelta(hours=1)  # even after expiry, a redelivery is recognised
    again = store.resolve(req.id, "plan_approval", "lead", "alice", True, "ok", response_id="m1")
    assert again == first
    with pytest.raises(Refused, match="is already approved"):
        store.resolve(req.id, "plan_approval", "lead", "alice", False, "no", response_id="m2")
    with pytest.raises(Refused, match="is already approved"):
        store.resolve(req.id, "plan_approval", "lead", "alice", True)  # no response id
    assert store.path.read_bytes() == after_first
    outcomes = [r["outcome"] for r in log_records(store)]
    assert outcomes == ["created", "accepted", "redelivered", "rejected", "rejected"]


def test_a_redelivery_from_the_wrong_party_is_still_refused(store: ProtocolStore) -> None:
    req = store.create("shutdown", "lead", "alice")
    store.resolve(req.id, "shutdown", "alice", "lead", True, response_id="m1")
    with pytest.raises(Refused, match="is for alice, not bob"):
        store.resolve(req.id, "shutdown", "bob", "lead", True, response_id="m1")


def test_latest_plan_is_the_last_created_for_that_teammate(store: ProtocolStore) -> None:
    assert store.latest_plan("alice") is None
    first = store.create("plan_approval", "alice", "lead", "v1")
    store.resolve(first.id, "plan_approval", "lead", "alice", True)
    store.create("plan_approval", "bob", "lead", "bob's")
    second = store.create("plan_approval", "alice", "lead", "v2")  # same clock tick
    latest = store.latest_plan("alice")
    assert latest.id == second.id and latest.status == "pending"


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
def test_bad_create_is_refused_and_nothing_is_written(store: ProtocolStore, args, error) -> None:
    with pytest.raises(error):
        store.create(*args)
    assert not store.path.exists()


def test_corrupt_requests_file_fails_closed_then_is_set_aside(store: ProtocolStore) -> None:
    store.team_dir.mkdir(parents=True)
    store.path.write_text("{oops")
    with pytest.raises(CorruptFile, match="requests.json"):
        store.latest_plan("alice")  # a plan gate must not open on unreadable state
    with pytest.raises(Refused, match="requests.json"):
        store.resolve("a" * 32, "shutdown", "alice", "lead", True)
    assert store.path.read_text() == "{oops"
    req = store.create("shutdown", "lead", "alice")
    (kept,) = store.team_dir.glob("requests.json.corrupt-*")
    assert kept.read_text() == "{oops"
    assert [r.id for r in store.load()] == [req.id]


def test_kind_of_maps_message_types() -> None:
    assert kind_of("shutdown_response") == "shutdown"
    assert kind_of("plan_approval_request") == "plan_approval"
    assert kind_of("message") is None


RESOLVER = """
import sys
from pathlib import Path
from agent_cli.errors import Refused
from agent_cli.team.protocol import ProtocolStore
store = ProtocolStore(Path(sys.argv[1]))
print("ready", flush=True)
sys.stdin.readline()
try:
    store.resolve(sys.argv[2], "shutdown", "alice", "lead", True, response_id=sys.argv[3])
    print("won")
except Refused as exc:
    print("refused", exc)
"""


def test_racing_responses_from_threads_and_processes_resolve_exactly_once(
    workdir: Path,
) -> None:
    store = ProtocolStore(workdir / ".team")
    req = store.create("shutdown", "lead", "alice")
    race = Race()
    for i in range(3):
        race.process(f"proc{i}", RESOLVER, str(store.team_dir), req.id, f"proc{i}")
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


def test_concurrent_creates_are_all_kept(workdir: Path) -> None:
    store = ProtocolStore(workdir / ".team")
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
    assert sorted(r.id for r in ProtocolStore(store.team_dir).load()) == sorted(made)
    assert len(made) == 80
