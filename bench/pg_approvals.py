"""Benchmark of approvals across hosts: a question through PostgreSQL and its answer back.

    python bench/pg_approvals.py [--runs N] [--json]

The server: AGENT_CLI_TEST_PG_URL, else a throwaway cluster (Debian's postgresql, as the
tests start it).

roundtrip_ms_p50/p99  RemoteBroker.ask -> the lead's ApprovalBridge -> a human who answers
                      at once -> the answer back in ask (two Databases, one process)
notify_floor_ms_p50   the floor: NOTIFY on one connection -> seen by a LISTEN on another ->
                      NOTIFY back -> seen (the two wake-ups a round trip needs)
roundtrip_vs_floor    roundtrip_ms_p50 / notify_floor_ms_p50
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from support.pg import start_cluster  # noqa: E402

from agent_cli.permissions.broker import ApprovalAnswer, ApprovalBroker  # noqa: E402
from agent_cli.pg.approvals import APPROVALS, ApprovalBridge, RemoteBroker  # noqa: E402
from agent_cli.pg.db import Database  # noqa: E402
from agent_cli.pg.schema import ensure_schema  # noqa: E402


def human(broker: ApprovalBroker, stop: threading.Event) -> None:
    """Answers every request "allow once" as soon as it is shown."""
    while not stop.is_set():
        req = broker.next_request(0.05)
        if req is not None:
            broker.answer(req.id, ApprovalAnswer("allow_once"))


def roundtrips(url: str, schema: str, runs: int) -> list[float]:
    from agent_cli.permissions.broker import ApprovalRequest

    lead_db, mate_db = Database(url, schema), Database(url, schema)
    ensure_schema(lead_db, [APPROVALS])
    broker, stop = ApprovalBroker(), threading.Event()
    broker.attach_ui()
    threading.Thread(target=human, args=(broker, stop), daemon=True).start()
    bridge = ApprovalBridge(lead_db, broker, host="bench-a").start()
    mate = RemoteBroker(mate_db, "bench-b")
    times = []
    try:
        for i in range(runs + 5):
            req = ApprovalRequest(agent="alice", tool="shell", input={"command": f"true {i}"},
                                  summary=f"true {i}")
            t0 = time.perf_counter()
            assert mate.ask(req).allowed
            if i >= 5:  # the first ones open connections and LISTENs
                times.append((time.perf_counter() - t0) * 1000)
    finally:
        stop.set()
        mate.close()
        bridge.close()
        lead_db.close()
        mate_db.close()
    return times


def notify_floor(url: str, runs: int) -> list[float]:
    import psycopg

    a, b = (psycopg.connect(url, autocommit=True) for _ in range(2))
    a.execute("LISTEN bench_pong")
    b.execute("LISTEN bench_ping")
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        a.execute("NOTIFY bench_ping")
        next(b.notifies(timeout=5, stop_after=1))
        b.execute("NOTIFY bench_pong")
        next(a.notifies(timeout=5, stop_after=1))
        times.append((time.perf_counter() - t0) * 1000)
    a.close()
    b.close()
    return times


def p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    url, stop = os.environ.get("AGENT_CLI_TEST_PG_URL"), None
    if not url:
        cluster, stop = start_cluster()
        url = cluster.url
    schema = "bench_" + uuid.uuid4().hex[:12]
    try:
        trips = roundtrips(url, schema, args.runs)
        floor = notify_floor(url, args.runs)
    finally:
        admin = Database(url, schema)
        admin.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        admin.close()
        if stop is not None:
            stop()
    figures = {
        "roundtrip_ms_p50": round(statistics.median(trips), 2),
        "roundtrip_ms_p99": round(p(trips, 0.99), 2),
        "notify_floor_ms_p50": round(statistics.median(floor), 2),
    }
    figures["roundtrip_vs_floor"] = round(figures["roundtrip_ms_p50"]
                                          / max(figures["notify_floor_ms_p50"], 0.001), 1)
    if args.json:
        print(json.dumps(figures))
    else:
        for name, value in figures.items():
            print(f"{name:22} {value}")


if __name__ == "__main__":
    main()
