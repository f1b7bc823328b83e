"""Benchmark of the PostgreSQL wake-up: how soon a teammate waiting in one process sees a
message another process sent (NOTIFY -> LISTEN -> ChangeSignal -> the inbox's stamp).

    python bench/pg_wake.py [--probes N] [--load-procs N] [--json]

Starts its own throwaway cluster (tests/support/pg.py), stops and deletes it at the end.

pg_wake_ms_p50 / _p99        idle: PgMailbox.send called in this process -> the waiting
                             thread of another process has seen its inbox's stamp change
                             (Listener thread woke it, it read the stamp). Targets <= 1 / 5.
pg_notify_ms_p50             idle: the same send -> the other process's Listener called
                             notify() (the wake-up alone, without the stamp read).
pg_send_ms_p50               one send (its transaction, NOTIFY included) in this process.
pg_wake_load_ms_p50 / _p99   pg_wake while N other processes send to other inboxes as fast
                             as they can (every one of their sends wakes the waiter too).
                             Target p99 <= 10.
Times are CLOCK_MONOTONIC, which every process on the machine shares.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from agent_cli.pg.db import Database  # noqa: E402
from agent_cli.pg.listen import Listener  # noqa: E402
from agent_cli.pg.mailbox import PgMailbox  # noqa: E402
from agent_cli.pg.schema import ensure_schema  # noqa: E402
from agent_cli.pg.team_schema import TEAM  # noqa: E402
from agent_cli.wakeup import ChangeSignal  # noqa: E402

INBOX = "alice"


def waiter(db: Database, pipe) -> None:
    """The other process: an idle teammate's wait, reporting when it saw its inbox change."""
    signal = ChangeSignal()
    first: list[int] = []

    def on_notify() -> None:
        if not first:
            first.append(time.monotonic_ns())
        signal.notify()

    listener = Listener(db, on_notify)
    listener.start()
    mail = PgMailbox(db)
    last = mail.stamp(INBOX)
    pipe.send("ready")
    while not pipe.poll():
        gen = signal.generation
        stamp = mail.stamp(INBOX)
        if stamp != last:
            last = stamp
            pipe.send((time.monotonic_ns(), first[0] if first else None))
            first.clear()
        signal.wait(gen, 0.5)
    listener.close()
    db.close()


def loader(db: Database, stop) -> None:
    """Sends to another inbox as fast as it can until told to stop."""
    mail = PgMailbox(db)
    i = 0
    while not stop.is_set():
        mail.send("bob", "carol", f"load {i}")
        i += 1
    db.close()


def probe(mail: PgMailbox, pipe, count: int) -> tuple[list[float], list[float], list[float]]:
    wake, notify, send = [], [], []
    for i in range(count):
        t0 = time.monotonic_ns()
        mail.send("bob", INBOX, f"probe {i}")
        send.append((time.monotonic_ns() - t0) / 1e6)
        if not pipe.poll(30):
            raise SystemExit("the waiter never woke")
        seen, notified = pipe.recv()
        wake.append((seen - t0) / 1e6)
        if notified is not None:
            notify.append((notified - t0) / 1e6)
    return wake, notify, send


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3)


def measure(url: str, probes: int, load_procs: int) -> dict[str, float]:
    db = Database(url, "bench_wake")
    ensure_schema(db, [TEAM])
    ctx = multiprocessing.get_context("spawn")
    ours, theirs = ctx.Pipe()
    proc = ctx.Process(target=waiter, args=(db, theirs), daemon=True)
    proc.start()
    assert ours.recv() == "ready"
    mail = PgMailbox(db)
    probe(mail, ours, 20)  # warm up both sides
    wake, notify, send = probe(mail, ours, probes)
    stop = ctx.Event()
    loaders = [ctx.Process(target=loader, args=(db, stop), daemon=True)
               for _ in range(load_procs)]
    for p in loaders:
        p.start()
    time.sleep(0.5)  # let the load reach its pace (a benchmark, not a test)
    loaded, _, _ = probe(mail, ours, probes)
    stop.set()
    for p in loaders:
        p.join(30)
    ours.send("stop")
    proc.join(30)
    db.close()
    return {
        "pg_wake_ms_p50": pct(wake, 0.5), "pg_wake_ms_p99": pct(wake, 0.99),
        "pg_notify_ms_p50": pct(notify, 0.5), "pg_send_ms_p50": pct(send, 0.5),
        "pg_wake_load_ms_p50": pct(loaded, 0.5), "pg_wake_load_ms_p99": pct(loaded, 0.99),
        "probes": probes, "load_procs": load_procs,
        "pg_wake_ms_mean": round(statistics.fmean(wake), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--probes", type=int, default=500)
    parser.add_argument("--load-procs", type=int, default=4)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    from support.pg import start_cluster

    cluster, stop = start_cluster()
    try:
        figures = measure(cluster.url, args.probes, args.load_procs)
    finally:
        stop()
    if args.json:
        print(json.dumps(figures))
        return
    for name, value in figures.items():
        print(f"{name:24} {value}")


if __name__ == "__main__":
    threading.current_thread().name = "bench"
    main()
