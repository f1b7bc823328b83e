"""Benchmark of the task board: the cost of a claim, under contention and on a big board.

    python bench/board.py [--json] [--big N]

fsync_write_ms            one atomic, fsync'd write of a task file (temp, fsync, rename): the
                          floor a claim cannot beat; sampled in the same run, before and after
                          the claim figures (median).
claim_ms_p50              claim(id, owner) on a 100-task board, one thread (median).
claims_per_s_8_threads    8 threads calling claim_next at once on one board (each claim uses a
                          fresh owner name, so every claim is one write). Target: >= 40% of
                          1000 / fsync_write_ms (shown as claims_vs_floor_pct).
claim_next_ms_10k         claim_next on a 10,000-task board, this process the only writer
                          (median). Target <= 20.
claim_next_ms_10k_foreign the same right after another board instance (the same mechanism
                          another process uses) wrote to the board: the stamp's journal says
                          which files to re-read (median).
claim_next_ms_10k_reserved claim_next on a 10,000-task board where every pending task but the
                          last few is assigned to someone else (the claimer skips them all:
                          the worst case of routing), median; for comparison with
                          claim_next_ms_10k.
cold_scan_ms_10k          the first look at a 10,000-task board (parse every file), for scale.
idle_scan_unchanged_ms    a waiter's check when nothing changed: stamp() compared with the
                          last value (median). Target <= 0.5.
snapshot_unchanged_ms     snapshot() when nothing changed (takes the lock), for comparison.
lease_renew_ms_p50        one renewal: renew([owner]) for an owner holding one task on a
                          100-task board (one write, no event), median.
expiry_scan_ms_10k        finding the expired leases on a 10,000-task board with 1,000 live
                          leases and 10 run out: the in-memory lease index of the cache, no file
                          parsed (median of the scan a board operation does). Target <= 5.
expiry_scan_ms_10k_foreign a whole board operation (held_by) right after another process
                          renewed a lease: lock, re-read the one file the stamp's journal names,
                          scan (median).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import threading
import time
from pathlib import Path

from agent_cli.board import Task, TaskBoard
from agent_cli.fsutil import atomic_write_json, atomic_write_text, utc_now


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def median_ms(fn, runs: int) -> float:
    return statistics.median(timed(fn) for _ in range(runs))


def fsync_write_samples(root: Path, runs: int = 60) -> list[float]:
    now = utc_now()
    sample = Task(
        id=1,
        subject="benchmark task",
        created_at=now,
        updated_at=now,
        status="in_progress",
        owner="alice",
        claim_token="0" * 32,
        claimed_at=now,
    ).to_json()
    path = root / "task_1.json"
    return [timed(lambda: atomic_write_json(path, sample)) for _ in range(runs)]


def claim_ms_p50(root: Path) -> float:
    board = TaskBoard(root / ".tasks")
    for i in range(100):
        board.create(f"task {i}")
    return statistics.median(timed(lambda i=i: board.claim(i, f"o{i}")) for i in range(1, 101))


def claims_per_s_8_threads(root: Path, n: int = 800) -> float:
    board = TaskBoard(root / ".tasks")
    write_board(board.dir, n, chained=False)
    board.snapshot()
    start = threading.Barrier(9)
    counts = [0] * 8

    def worker(k: int) -> None:
        start.wait()
        seq = 0
        while board.claim_next(f"t{k}-{seq}").task is not None:
            seq += 1
        counts[k] = seq

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    start.wait()
    began = time.perf_counter()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - began
    assert sum(counts) == n, counts
    return sum(counts) / elapsed


def lease_renew_ms_p50(root: Path) -> float:
    board = TaskBoard(root / ".tasks")
    for i in range(100):
        board.create(f"task {i}")
        board.claim(i + 1, f"o{i}")
    return median_ms(lambda: board.renew(["o7"]), 100)


def expiry_scan(root: Path, n: int) -> dict[str, float]:
    """A board of n tasks, n/10 claimed (live leases), 10 of them with a lease run out."""
    tasks_dir = root / ".tasks"
    write_board(tasks_dir, n, chained=False)
    clock = {"t": time.time()}
    board = TaskBoard(tasks_dir, lease_s=600, clock=lambda: clock["t"])
    for i in range(1, n // 10 + 1):
        board.claim(i, f"w{i}", lease_s=60 if i <= 10 else 600)
    clock["t"] += 120  # ten leases ran out, nobody has looked yet
    cache = board._section.cache
    leases = board.leases

    def scan() -> int:
        due = leases.due(cache.leases, cache.tasks, cache.holder_names(), cache.held_by)
        assert len(due) == 10, len(due)
        return len(due)

    local = median_ms(scan, 200)
    board.held_by("nobody")  # an operation: takes the ten back (one write)
    other = TaskBoard(tasks_dir, lease_s=600, clock=lambda: clock["t"])
    other.snapshot()
    foreign = []
    for k in range(30):
        other.renew([f"w{11 + k}"])  # a write this board does not know about yet
        foreign.append(timed(lambda: board.held_by("nobody")))
    return {"expiry_scan_ms_10k": local, "expiry_scan_ms_10k_foreign": statistics.median(foreign)}


def write_board(
    tasks_dir: Path, n: int, chained: bool = True, reserved_until: int = 0
) -> None:
    """n pending tasks written directly in the on-disk format (no fsync: setup only);
    `chained`: every third task waits for the one before it; ids up to `reserved_until` are
    assigned to "writer"."""
    tasks_dir.mkdir(parents=True, exist_ok=True)
    now = utc_now()
    for i in range(1, n + 1):
        deps = [i - 1] if chained and i % 3 == 0 else []
        task = Task(
            id=i,
            subject=f"task {i}",
            description="generated",
            blocked_by=deps,
            created_at=now,
            updated_at=now,
            assignee="writer" if i <= reserved_until else None,
        )
        atomic_write_json(tasks_dir / f"task_{i}.json", task.to_json(), fsync=False)
    atomic_write_text(tasks_dir / ".next_id", f"{n + 1}\n", fsync=False)


def big_board(root: Path, n: int) -> dict[str, float]:
    tasks_dir = root / ".tasks"
    write_board(tasks_dir, n)
    board = TaskBoard(tasks_dir)
    cold = timed(board.snapshot)
    seq = iter(range(10**9))
    local = median_ms(lambda: board.claim_next(f"b{next(seq)}"), 60)
    other = TaskBoard(tasks_dir)
    other.snapshot()
    foreign = []
    for _ in range(30):
        other.claim_next(f"x{next(seq)}")  # a write board does not know about
        foreign.append(timed(lambda: board.claim_next(f"b{next(seq)}")))
    stamp_seen = board.stamp()
    idle = median_ms(lambda: board.stamp() == stamp_seen, 2000)
    snap = median_ms(board.snapshot, 200)
    return {
        "claim_next_ms_10k": local,
        "claim_next_ms_10k_foreign": statistics.median(foreign),
        "cold_scan_ms_10k": cold,
        "idle_scan_unchanged_ms": idle,
        "snapshot_unchanged_ms": snap,
    }


def reserved_board(root: Path, n: int) -> dict[str, float]:
    tasks_dir = root / ".tasks"
    write_board(tasks_dir, n, chained=False, reserved_until=n - 100)
    board = TaskBoard(tasks_dir)
    board.snapshot()
    seq = iter(range(10**9))
    return {"claim_next_ms_10k_reserved": median_ms(lambda: board.claim_next(f"b{next(seq)}"), 60)}


def run(big: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for sub in ("floor", "claim", "threads", "big", "reserved", "renew", "expiry"):
            (root / sub).mkdir()
        # the floor is sampled before and after the claims: the disk's speed drifts
        floor = fsync_write_samples(root / "floor")
        figures = {
            "claim_ms_p50": claim_ms_p50(root / "claim"),
            "claims_per_s_8_threads": claims_per_s_8_threads(root / "threads"),
        }
        floor += fsync_write_samples(root / "floor")
        figures = {"fsync_write_ms": statistics.median(floor), **figures}
        figures.update(big_board(root / "big", big))
        figures.update(reserved_board(root / "reserved", big))
        figures["lease_renew_ms_p50"] = lease_renew_ms_p50(root / "renew")
        figures.update(expiry_scan(root / "expiry", big))
    floor_rate = 1000 / figures["fsync_write_ms"]
    figures["claims_vs_floor_pct"] = 100 * figures["claims_per_s_8_threads"] / floor_rate
    return {k: round(v, 4) for k, v in figures.items()}


TARGETS = {
    "claims_vs_floor_pct": (">=", 40.0),
    "claim_next_ms_10k": ("<=", 20.0),
    "idle_scan_unchanged_ms": ("<=", 0.5),
    "expiry_scan_ms_10k": ("<=", 5.0),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--big", type=int, default=10_000, help="size of the big board")
    args = parser.parse_args()
    figures = run(args.big)
    if args.json:
        print(json.dumps(figures))
        return
    print(f"{'figure':<28}{'value':>12}  target")
    for name, value in figures.items():
        target = ""
        if name in TARGETS:
            op, limit = TARGETS[name]
            ok = value >= limit if op == ">=" else value <= limit
            target = f"{op} {limit:g}  {'ok' if ok else 'MISSED'}"
        print(f"{name:<28}{value:>12.3f}  {target}")


if __name__ == "__main__":
    main()
