"""Attacks on ownership with leases on the database clock: a holder whose lease ran out (its
host's clock a day behind, so by its own reckoning the lease is young) cannot renew, complete
or release the task another teammate claimed since; the new holder's claim is untouched."""

from __future__ import annotations

import time

import pytest

from agent_cli.board.leases import LeaseExpired
from agent_cli.errors import Refused
from agent_cli.pg.board import PgTaskBoard


def test_a_lost_lease_cannot_be_renewed_completed_or_released(pg_db, monkeypatch) -> None:
    board = PgTaskBoard(pg_db, lease_s=0.05)
    board.create("contested")
    old = board.claim(1, "alice")
    pg_db.execute("SELECT pg_sleep(0.1)")  # the server's clock runs the lease out
    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() - 86_400)  # alice's host: a day behind
    assert board.renew(["alice"]) == []
    new = board.claim(1, "bob", lease_s=600)
    assert new.claim_token != old.claim_token
    assert board.renew(["alice"]) == []
    with pytest.raises(LeaseExpired, match="alice's claim on task 1 ran out"):
        board.complete(1, "alice", old.claim_token, "alice's stale result")
    with pytest.raises(Refused):
        board.release(1, "alice")
    with pytest.raises(Refused):  # bob's token is bob's, whoever sends it
        board.complete(1, "alice", new.claim_token, "alice with bob's token")
    task = board.get(1)
    assert (task.status, task.owner, task.claim_token) == ("in_progress", "bob", new.claim_token)
    board.complete(1, "bob", new.claim_token, "bob's result")
    assert board.get(1).result == "bob's result" and board.get(1).status == "completed"
    assert [e["action"] for e in board.events()].count("completed") == 1
