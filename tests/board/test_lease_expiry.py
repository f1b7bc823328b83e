"""Claim leases (P17 semantics): a claim is valid over [claimed_at, lease_expires_at); the
exact expiry instant is already expired; an expired lease goes back to pending at the next
board operation by anyone, as one lease_expired event; the old token can never complete it;
no claim token is ever handed out twice on a board. The rules run on both backends (the
injected clock stands in for the database's); hand-edited and planted files on files only."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from support.board_backends import Backend

from agent_cli.board.leases import LeaseExpired, iso_ms, parse_ms
from agent_cli.board.store import TaskBoard
from agent_cli.errors import Refused, StorageError

T0 = 1_800_000_000.0  # the injected clock starts here


class Clock:
    def __init__(self, t: float = T0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def board_at(where: Path | Backend, clock: Clock, **kw) -> TaskBoard:
    if isinstance(where, Backend):
        return where.board(clock=clock, **kw)
    return TaskBoard(where / ".tasks", clock=clock, **kw)


def events(board: TaskBoard, action: str) -> list[dict]:
    return [e for e in board.events() if e["action"] == action]


def test_a_claim_is_valid_until_just_before_its_expiry_and_expired_at_the_instant(board_backend):
    clock = Clock()
    board = board_at(board_backend, clock, lease_s=60)
    board.create("one")
    task = board.claim_next("alice").task
    assert task.claimed_at == iso_ms(round(T0 * 1000))
    assert parse_ms(task.lease_expires_at) - parse_ms(task.claimed_at) == 60_000
    clock.t = T0 + 59.999
    assert board.snapshot().tasks[0].status == "in_progress"  # the last valid millisecond
    clock.t = T0 + 60  # [claimed_at, lease_expires_at): this instant is outside
    with pytest.raises(LeaseExpired, match="lease expired") as refused:
        board.complete(1, "alice", task.claim_token, "too late")
    assert refused.value.exit_code == 4
    back = board.get(1)
    assert (back.status, back.owner, back.claim_token, back.lease_expires_at) == (
        "pending", None, None, None)
    [expired] = events(board, "lease_expired")
    assert expired["details"]["owner"] == "alice"
    assert expired["details"]["token"] == task.claim_token
    assert expired["details"]["lease_expires_at"] == task.lease_expires_at
    assert expired["details"]["expired_at"] == iso_ms(round((T0 + 60) * 1000))
    assert not events(board, "completed")


def test_every_board_operation_takes_an_expired_lease_back_exactly_once(board_backend):
    clock = Clock()
    board = board_at(board_backend, clock, lease_s=10)
    for n in range(3):
        board.create(f"t{n}")
    held = [board.claim(i, f"w{i}") for i in (1, 2, 3)]
    clock.t = T0 + 10
    other = board_at(board_backend, clock)  # another process's view: it sweeps on a plain read
    assert [t.status for t in other.snapshot().tasks] == ["pending"] * 3
    assert [e.task_id for e in other.take_expired()] == [1, 2, 3]
    for op in (board.snapshot, board.doctor, lambda: board.claim_next("late")):
        op()
    assert len(events(board, "lease_expired")) == 3  # one write took all three back
    assert sorted(t.claim_token for t in held) == sorted(
        e["details"]["token"] for e in events(board, "lease_expired"))


def test_an_old_owner_or_token_cannot_complete_a_new_lease(board_backend):
    clock = Clock()
    board = board_at(board_backend, clock, lease_s=5)
    board.create("one")
    first = board.claim_next("alice").task
    clock.t += 5
    again = board.claim_next("alice").task  # the same owner claims it afresh
    assert again.id == 1 and again.claim_token != first.claim_token
    with pytest.raises(LeaseExpired):
        board.complete(1, "alice", first.claim_token)
    clock.t += 5
    bob = board.claim_next("bob").task
    for owner, token in (("alice", first.claim_token), ("alice", again.claim_token),
                         ("bob", first.claim_token), ("bob", again.claim_token)):
        with pytest.raises(Refused):
            board.complete(1, owner, token)
    assert board.get(1).owner == "bob"
    assert board.complete(1, "bob", bob.claim_token, "ok").task.status == "completed"
    assert len(events(board, "completed")) == 1


def test_a_repeating_token_generator_never_reuses_a_token(board_backend):
    draws = iter(["aaa", "aaa", "bbb", "aaa", "bbb", "ccc"])
    clock = Clock()
    board = board_at(board_backend, clock, lease_s=5, token_factory=lambda: next(draws))
    for n in range(3):
        board.create(f"t{n}")
    assert board.claim(1, "alice").claim_token == "aaa"
    assert board.claim(2, "bob").claim_token == "bbb"  # "aaa" is active: drawn again
    clock.t += 5  # both expire: their tokens are history now
    assert board.claim(3, "carol").claim_token == "ccc"
    if board_backend.files:
        ledger = (board_backend.dir / "tokens").read_text().split()
        assert ledger.count("aaa") == 2 and ledger.count("ccc") == 1  # claimed, expired
    assert {e["details"]["token"] for e in events(board, "lease_expired")} == {"aaa", "bbb"}


def test_a_generator_that_only_repeats_refuses_the_claim_and_changes_nothing(board_backend):
    board = board_at(board_backend, Clock(), token_factory=lambda: "same")
    board.create("a")
    board.create("b")
    board.complete(1, "alice", board.claim(1, "alice").claim_token, "done")
    before = board.get(2)
    with pytest.raises(Refused, match="only used claim tokens"):
        board.claim(2, "bob")
    assert board.get(2) == before
    # the history is the board's, not this instance's: a second process is refused too
    other = board_at(board_backend, Clock(), token_factory=lambda: "same")
    with pytest.raises(Refused, match="only used claim tokens"):
        other.claim_next("carol")
    assert [e["task_id"] for e in events(board, "claimed")] == [1]


def test_a_malformed_token_from_the_generator_is_never_written(board_backend):
    draws = itertools.chain(["has space", "new\nline", ""], itertools.repeat("good"))
    board = board_at(board_backend, Clock(), token_factory=lambda: next(draws))
    board.create("a")
    assert board.claim(1, "alice").claim_token == "good"


def test_renewal_extends_a_live_lease_and_never_revives_an_expired_one(board_backend):
    clock = Clock()
    board = board_at(board_backend, clock, lease_s=30)
    board.create("a")
    board.create("b")
    a = board.claim(1, "alice")
    b = board.claim(2, "bob")
    stamp = board.stamp()
    clock.t += 20
    [renewed] = board.renew(["alice"])
    assert parse_ms(renewed.lease_expires_at) == round((T0 + 50) * 1000)
    assert renewed.claim_token == a.claim_token and board.stamp() != stamp
    assert not [e for e in board.events() if e["task_id"] == 1 and e["action"] != "claimed"
                and e["action"] != "created"]  # renewal writes no event
    clock.t += 15  # alice renewed (until +50), bob did not (until +30)
    assert board.renew(["bob"]) == []
    assert board.get(2).status == "pending"
    with pytest.raises(LeaseExpired):
        board.complete(2, "bob", b.claim_token)
    assert board.complete(1, "alice", a.claim_token).task.status == "completed"


def test_a_claim_from_before_leases_gets_the_default_lease(workdir):
    clock = Clock()
    board = board_at(workdir, clock)
    board.create("old")
    path = workdir / ".tasks" / "task_1.json"
    data = json.loads(path.read_text())
    data.update(status="in_progress", owner="alice", claim_token="legacy",
                claimed_at=iso_ms(round(T0 * 1000)))
    data.pop("lease_expires_at")
    path.write_text(json.dumps(data))
    board.doctor()
    clock.t = T0 + 599
    assert board_at(workdir, clock).get(1).status == "in_progress"
    clock.t = T0 + 600
    assert board_at(workdir, clock).get(1).status == "pending"


def test_a_pending_task_with_a_lease_is_reported_as_invalid(workdir):
    board = board_at(workdir, Clock())
    board.create("x")
    path = workdir / ".tasks" / "task_1.json"
    data = json.loads(path.read_text())
    data["lease_expires_at"] = "2030-01-01T00:00:00.000Z"
    path.write_text(json.dumps(data))
    problems = board.doctor()
    assert [p.task_id for p in problems] == [1]
    assert "lease_expires_at" in problems[0].message


def test_a_planted_token_ledger_is_never_written_through(workdir, tmp_path):
    board = board_at(workdir, Clock())
    board.create("a")
    target = tmp_path / "elsewhere.txt"
    target.write_text("precious\n")
    (workdir / ".tasks" / "tokens").symlink_to(target)
    with pytest.raises(StorageError, match="tokens is a symbolic link") as refused:
        board.claim(1, "alice")
    assert refused.value.exit_code == 5
    assert target.read_text() == "precious\n"
    assert board.get(1).status == "pending"
    (workdir / ".tasks" / "tokens").unlink()
    (workdir / ".tasks" / "tokens").mkdir()  # not a file either
    with pytest.raises(StorageError, match="not a regular file"):
        board.claim(1, "alice")
    assert board.snapshot().tasks[0].status == "pending"  # reads go on


def test_a_roster_pid_no_process_can_have_proves_nothing(workdir):
    from agent_cli.team.liveness import pid_ended

    assert [pid_ended(p) for p in (0, -1, 1 << 40)] == [False, False, False]
