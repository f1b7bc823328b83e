"""Benchmark of the task board on PostgreSQL, next to the file board, in the same run.

    python bench/pg_board.py [--json] [--tasks N] [--procs P]

It starts its own throwaway cluster (tests/support/pg.py's start_cluster: Debian's
postgresql, fsync off; so it needs the test extra) and deletes it at the end. Figures:

pg_claims_per_s           claim_next + complete by P processes (default 8) until a board of N
                          tasks (default 10,000; half wait on a task 100 ids earlier) is done.
                          Target >= 1,500.
files_claims_per_s        the same workload on the file board (.tasks/ in a temp directory).
floor_claims_per_s        the server's floor: the same processes running a bare
                          `UPDATE ... FOR UPDATE SKIP LOCKED` claim and an `UPDATE` completion
                          per task on a one-table queue with a partial index on the free rows
                          (no rules, tokens, events, stamp or NOTIFY);
                          pg_vs_floor_pct = pg_claims_per_s / floor_claims_per_s.
pg_claim_next_ms_p50      one claim_next on a 10,000-task board, one process (median).
                          Target <= 1.
files_claim_next_ms_p50   the same on the file board.
pg_expiry_scan_ms         the lease sweep every board operation starts with, on a 10,000-task
                          board with 1,000 live leases and none run out (median). Target <= 1.
pg_expiry_take_back_ms    the sweep when 10 of those leases ran out: one transaction takes them
                          back with their events (median of 5).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

FLOOR_CLAIM = """
UPDATE floor SET owner = %s WHERE id = (
    SELECT id FROM floor WHERE owner IS NULL ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
RETURNING id"""


def open_board(spec: Any, **kw: Any) -> Any:
    if isinstance(spec, str):
        from agent_cli.board.store import TaskBoard

        return TaskBoard(Path(spec), **kw)
    from agent_cli.pg.board import PgTaskBoard

    return PgTaskBoard(spec, **kw)


def fill(board: Any, n: int) -> None:
    for i in range(1, n + 1):
        board.create(f"task {i}", blocked_by=[i - 100] if i > 100 and i % 2 == 0 else [])


def worker(spec: Any, owner: str, ready: Any, go: Any, out: Any) -> None:
    """Claim and complete until the board is done; report (owner, count, end time)."""
    board = open_board(spec)
    board.stamp()
    ready.put(owner)
    go.wait()
    count = 0
    while True:
        res = board.claim_next(owner)
        if res.task is None:
            if res.reason.startswith("all ") or res.reason == "no tasks on the board":
                break
            continue  # the rest waits on tasks others hold: look again
        board.complete(res.task.id, owner, res.task.claim_token, "ok")
        count += 1
    out.put((owner, count, time.time()))


def floor_worker(url: str, owner: str, ready: Any, go: Any, out: Any) -> None:
    import psycopg

    conn = psycopg.connect(url, autocommit=True)
    ready.put(owner)
    go.wait()
    count = 0
    while (row := conn.execute(FLOOR_CLAIM, (owner,)).fetchone()) is not None:
        conn.execute("UPDATE floor SET done = true WHERE id = %s", (row[0],))
        count += 1
    out.put((owner, count, time.time()))
    conn.close()


def race(target: Any, spec: Any, procs: int) -> tuple[int, float]:
    """Start `procs` spawned workers, release them at once; (tasks done, seconds)."""
    ctx = multiprocessing.get_context("spawn")
    ready, out, go = ctx.Queue(), ctx.Queue(), ctx.Event()
    workers = [ctx.Process(target=target, args=(spec, f"w{i}", ready, go, out))
               for i in range(procs)]
    for p in workers:
        p.start()
    for _ in workers:
        ready.get(timeout=120)
    start = time.time()
    go.set()
    results = [out.get(timeout=1800) for _ in workers]
    for p in workers:
        p.join(60)
    return sum(r[1] for r in results), max(r[2] for r in results) - start


def claims_per_s(spec: Any, n: int, procs: int) -> float:
    fill(open_board(spec), n)
    done, seconds = race(worker, spec, procs)
    assert done == n, f"{done} of {n} tasks done"
    return done / seconds


def floor_per_s(url: str, n: int, procs: int) -> float:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS floor")
        conn.execute("CREATE TABLE floor (id bigint PRIMARY KEY, owner text, "
                     "done boolean NOT NULL DEFAULT false)")
        conn.execute("INSERT INTO floor (id) SELECT generate_series(1, %s)", (n,))
        conn.execute("CREATE INDEX floor_free ON floor (id) WHERE owner IS NULL")
        conn.execute("VACUUM ANALYZE floor")
    done, seconds = race(floor_worker, url, procs)
    assert done == n
    return done / seconds


def claim_next_ms(spec: Any, n: int, runs: int = 200) -> float:
    board = open_board(spec)
    fill(board, n)
    times = []
    for i in range(runs):
        start = time.perf_counter()
        board.claim_next(f"o{i}")
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def expiry(db: Any, n: int) -> dict[str, float]:
    """The sweep on a board of `n` tasks with 1,000 live leases; then with 10 run out."""
    from agent_cli.pg.board import PgTaskBoard

    board = PgTaskBoard(db)
    fill(board, n)
    for i in range(1000):
        board.claim_next(f"h{i}")
    sweep = board._tx.sweep  # what every operation runs first
    times = []
    for _ in range(200):
        start = time.perf_counter()
        sweep()
        times.append((time.perf_counter() - start) * 1000)
    taking = []
    for _ in range(5):
        board.db.execute("UPDATE board_task SET lease_expires_at = now() - interval '1 s' "
                         "WHERE id IN (SELECT id FROM board_task WHERE status = 'in_progress' "
                         "ORDER BY id LIMIT 10)")
        start = time.perf_counter()
        sweep()
        taking.append((time.perf_counter() - start) * 1000)
        assert len(board.take_expired()) == 10
        for i in range(10):
            board.claim_next(f"again{len(taking)}x{i}")
    return {"pg_expiry_scan_ms": statistics.median(times),
            "pg_expiry_take_back_ms": statistics.median(taking)}


def run(n: int, procs: int) -> dict[str, float]:
    from support.pg import start_cluster

    from agent_cli.pg.db import Database

    cluster, stop = start_cluster()
    figures: dict[str, float] = {}
    try:
        def db(name: str) -> Database:
            return Database(cluster.url, name)

        with tempfile.TemporaryDirectory(prefix="agent-cli-bench-") as tmp:
            figures["pg_claims_per_s"] = claims_per_s(db("b_claims"), n, procs)
            figures["files_claims_per_s"] = claims_per_s(str(Path(tmp, "a", ".tasks")), n,
                                                          procs)
            figures["floor_claims_per_s"] = floor_per_s(cluster.url, n, procs)
            figures["pg_vs_floor_pct"] = (100 * figures["pg_claims_per_s"]
                                          / figures["floor_claims_per_s"])
            figures["pg_claim_next_ms_p50"] = claim_next_ms(db("b_next"), 10_000)
            figures["files_claim_next_ms_p50"] = claim_next_ms(
                str(Path(tmp, "b", ".tasks")), 10_000)
            figures.update(expiry(db("b_expiry"), 10_000))
    finally:
        stop()
    return figures


TARGETS = {"pg_claims_per_s": ">= 1500", "pg_claim_next_ms_p50": "<= 1",
           "pg_expiry_scan_ms": "<= 1"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--procs", type=int, default=8)
    args = parser.parse_args()
    figures = run(args.tasks, args.procs)
    if args.json:
        print(json.dumps(figures))
        return
    print(f"{'figure':<28}{'value':>12}  target")
    for name, value in figures.items():
        print(f"{name:<28}{value:>12.3f}  {TARGETS.get(name, '')}")


if __name__ == "__main__":
    main()
