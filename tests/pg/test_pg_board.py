"""What only the PostgreSQL board has to prove: leases on the database's clock (the host's
is never read), a NOTIFY with every change and none without one, ids from a sequence never
reused, claimers in spawned processes sharing one board through a pickled Database, and a
dependency added while its blocker completes still counted right."""

from __future__ import annotations

import multiprocessing
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

from agent_cli.pg.board import PgTaskBoard
from agent_cli.pg.db import Database


def test_leases_run_on_the_database_clock_not_the_hosts(pg_db, monkeypatch):
    board = PgTaskBoard(pg_db, lease_s=0.05)
    board.create("job")
    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() + 86_400)  # the host is a day ahead
    task = board.claim(1, "alice", lease_s=600)
    assert board.get(1).status == "in_progress"  # the host's clock did not expire it
    [(db_now,)] = pg_db.execute("SELECT extract(epoch FROM now())")
    assert abs(float(db_now) - real()) < 60  # stamped with the server's time
    assert task.claimed_at[:10] == time.strftime("%Y-%m-%d", time.gmtime(float(db_now)))
    board.create("short")
    short = board.claim(2, "bob")  # the board's default lease: 50 ms
    pg_db.execute("SELECT pg_sleep(0.1)")  # the server's clock moves on
    assert board.get(2).status == "pending"
    [expired] = [e for e in board.events() if e["action"] == "lease_expired"]
    assert expired["details"]["token"] == short.claim_token
    assert expired["details"]["expired_at"] >= short.lease_expires_at


def test_each_change_notifies_once_and_a_refusal_never(pg_db):
    board = PgTaskBoard(pg_db)
    listener = pg_db.listen_connection()

    def heard() -> list[str]:
        return [n.payload for n in listener.notifies(timeout=0.2)]

    board.create("a")
    assert heard() == ["board"]
    board.claim_next("alice")
    assert heard() == ["board"]
    assert board.claim_next("bob").task is None  # nothing claimed: no change, no wake-up
    board.renew(["alice"])  # a write nobody needs waking for
    assert heard() == []
    listener.close()


def test_ids_come_from_a_sequence_and_are_never_reused(pg_db):
    board = PgTaskBoard(pg_db)
    board.create("a")
    board.create("b")
    pg_db.execute("DELETE FROM board_task WHERE id = 2")  # a hand edit
    assert PgTaskBoard(pg_db).create("c").id == 3


def test_doctor_names_a_dependency_cycle_made_by_hand(pg_db):
    board = PgTaskBoard(pg_db)
    board.create("a")
    board.create("b", blocked_by=[1])
    pg_db.execute("UPDATE board_task SET blocked_by = '{2}', waiting = 1 WHERE id = 1")
    [problem] = board.doctor()
    assert problem.message == "dependency cycle #1 -> #2 -> #1"
    assert problem.path.endswith("board_task[1]")


def _claim_all(db: Database, owner: str, out) -> None:
    board = PgTaskBoard(db)
    got = []
    while (task := board.claim_next(owner).task) is not None:
        board.complete(task.id, owner, task.claim_token, owner)
        got.append(task.id)
    out.put((owner, got))
    db.close()


def test_spawned_processes_given_the_database_share_the_board(pg_db):
    board = PgTaskBoard(pg_db)
    for n in range(120):
        board.create(f"t{n}", blocked_by=[n] if n % 3 else [])
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    procs = [ctx.Process(target=_claim_all, args=(pg_db, f"p{i}", out)) for i in range(4)]
    for p in procs:
        p.start()
    results = dict(out.get(timeout=120) for _ in procs)
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    ids = [i for got in results.values() for i in got]
    assert sorted(ids) == list(range(1, 121)), Counter(ids).most_common(3)
    done = {e["task_id"]: e["actor"] for e in board.events() if e["action"] == "completed"}
    assert all(done[i] == owner for owner, got in results.items() for i in got)
    # a task never completed before what it waits on
    order = [e["task_id"] for e in board.events() if e["action"] == "completed"]
    assert all(order.index(t.blocked_by[0]) < order.index(t.id)
               for t in board.snapshot().tasks if t.blocked_by)


def test_a_dependency_added_while_its_blocker_completes_is_counted(pg_db):
    board, other = PgTaskBoard(pg_db), PgTaskBoard(pg_db)  # as two processes
    for _ in range(60):
        blocker = board.create("blocker")
        later = board.create("later")
        held = board.claim(blocker.id, "alice")
        with ThreadPoolExecutor(2) as pool:
            done = pool.submit(board.complete, blocker.id, "alice", held.claim_token)
            upd = pool.submit(other.update, later.id, add_blocked_by=[blocker.id])
            done.result(30)
            upd.result(30)
        # whichever went first, `later` is claimable now: its blocker is completed
        assert board.claim(later.id, "bob").owner == "bob"
        board.release(later.id, "bob")
        board.update(later.id, assignee="carol")  # out of the way of the next claim_next


def test_an_owner_proved_gone_loses_its_task_at_the_next_operation(pg_db):
    gone: dict[str, str] = {}
    asked: list[list[str]] = []

    def owner_gone(owners):
        asked.append(sorted(owners))
        return {o: gone[o] for o in owners if o in gone}

    board = PgTaskBoard(pg_db, owner_gone=owner_gone)
    board.create("job")
    board.claim(1, "alice")
    assert board.get(1).owner == "alice" and asked[-1] == ["alice"]
    gone["alice"] = "no heartbeat for 45 s"
    assert board.claim_next("bob").task.id == 1  # taken back first, then claimable
    [exp] = board.take_expired()
    assert (exp.task_id, exp.owner, exp.reason) == (1, "alice", "no heartbeat for 45 s")
    [event] = [e for e in board.events() if e["action"] == "lease_expired"]
    assert (event["actor"], event["details"]["reason"]) == ("host", "no heartbeat for 45 s")
