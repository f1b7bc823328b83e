"""Assigned, role and plan-required tasks under racing claimers — 8 threads and 4 processes on
one board, a process re-routing tasks while they claim, and writers SIGKILLed mid-flight:
only a member the task allows ever owns it, and the event log (written under the lock, in
lock order; on PostgreSQL in commit order) proves it claim by claim. On both backends."""

from __future__ import annotations

import json
import random
import threading
from collections import Counter

from support.board_backends import Backend
from support.race import TIMEOUT, Race, go, launch, ready

from agent_cli.board import TaskBoard
from agent_cli.board.routing import refusal
from agent_cli.errors import Refused

# name -> role; threads t0-t7, processes p0-p3 (p3 has no role: a CLI user not on the team)
ROLES = {**{f"t{i}": "tester" if i < 4 else "writer" for i in range(8)},
         "p0": "tester", "p1": "Tester", "p2": "writer", "p3": None}
NAMES = sorted(ROLES)

# A claimer process: claims (next, or a random id) and completes until told to stop or the
# board is all done; prints the ids it claimed.
CLAIMER = r"""
import json, random, sys
from support.board_backends import open_board
from agent_cli.errors import Refused
board = open_board(sys.argv[1])
owner, role = sys.argv[2], (sys.argv[3] or None)
until_done = sys.argv[4] == "1"
rng = random.Random(owner)
import threading
done_event = threading.Event()
print("ready", flush=True)
sys.stdin.readline()
got = []
while True:
    if rng.random() < 0.2:
        ids = [t.id for t in board.snapshot().tasks if t.status == "pending"]
        try:
            task = board.claim(rng.choice(ids), owner, role) if ids else None
        except Refused:
            continue  # not its task (or taken): the board said why
    else:
        task = board.claim_next(owner, role).task
    if task is None:
        if not until_done:
            break
        seen = board.stamp()  # before the look: a change after it still wakes us
        if all(t.status == "completed" for t in board.snapshot().tasks):
            break
        while board.stamp() == seen and not done_event.wait(0.002):
            pass  # pace: look again once the board changed
        continue
    got.append(task.id)
    board.complete(task.id, owner, task.claim_token, "done by " + owner)
print(json.dumps(got), flush=True)
"""

# Re-routes random pending tasks to random members (or to a role, or to anyone) until the
# board is all done; prints how many updates landed and how many were refused.
REROUTER = r"""
import json, random, sys
from support.board_backends import open_board
from agent_cli.errors import Refused
board = open_board(sys.argv[1])
names = sys.argv[2].split(",")
rng = random.Random(7)
print("ready", flush=True)
sys.stdin.readline()
done = refused = 0
while True:
    tasks = board.snapshot().tasks
    if all(t.status == "completed" for t in tasks):
        break
    task = rng.choice(tasks)
    roll = rng.random()
    try:
        if roll < 0.6:
            board.update(task.id, assignee=rng.choice(names), role="")
        elif roll < 0.8:
            board.update(task.id, assignee="", role=rng.choice(["tester", "writer"]))
        else:
            board.update(task.id, assignee="", role="", require_plan=rng.random() < 0.5)
        done += 1
    except Refused:
        refused += 1
print(json.dumps([done, refused]), flush=True)
"""


def thread_claimer(board, owner, got, stop: threading.Event | None) -> None:
    rng = random.Random(owner)
    role = ROLES[owner]
    while True:
        task = None
        if rng.random() < 0.2:  # an explicit claim of any pending id: the board decides
            ids = [t.id for t in board.snapshot().tasks if t.status == "pending"]
            try:
                task = board.claim(rng.choice(ids), owner, role) if ids else None
            except Refused:
                continue  # not its task (or taken): the board said why
        else:
            task = board.claim_next(owner, role).task
        if task is None:
            if stop is None or stop.is_set():
                return
            seen = board.stamp()  # before the look: a change after it still wakes us
            if all(t.status == "completed" for t in board.snapshot().tasks):
                return
            while board.stamp() == seen and not stop.wait(0.002):
                pass  # pace: look again once the board changed (or the test ends)
            continue
        got.append(task.id)
        board.complete(task.id, owner, task.claim_token, f"done by {owner}")


def replay(events: list[dict]) -> tuple[int, int]:
    """Walk the log in lock order: each claim was allowed by the task's routing as it stood
    at that moment, and no task was re-routed while someone held it. Returns
    (claims, updates)."""
    routing: dict[int, dict] = {}
    held: dict[int, str] = {}
    claims = updates = 0
    for e in events:
        tid, d = e["task_id"], e["details"]
        if e["action"] == "created":
            routing[tid] = {"assignee": d.get("assignee"), "role": d.get("role")}
        elif e["action"] == "updated":
            assert tid not in held, f"#{tid} re-routed while {held.get(tid)} held it: {e}"
            for key in ("assignee", "role"):
                if key in d:
                    routing[tid][key] = d[key]
            updates += 1
        elif e["action"] == "claimed":
            r, who = routing[tid], e["actor"]
            assert r["assignee"] in (None, who), f"#{tid} assigned to {r['assignee']}: {e}"
            if r["role"] is not None:
                mine = ROLES[who]
                assert mine is not None and mine.lower() == r["role"].lower(), (r, e)
            held[tid] = who
            claims += 1
        elif e["action"] in ("completed", "released"):
            held.pop(tid, None)
    return claims, updates


def fill_routed(board: TaskBoard, n: int) -> None:
    for i in range(n):
        kind = i % 5
        if kind == 0:
            board.create(f"task {i}", assignee=NAMES[i % len(NAMES)])
        elif kind == 1:
            board.create(f"task {i}", role="tester", require_plan=True)
        elif kind == 2:
            board.create(f"task {i}", role="writer")
        elif kind == 3:
            board.create(f"task {i}", assignee="t5", role="writer", require_plan=True)
        else:
            board.create(f"task {i}")


def start_all(race: Race, board: TaskBoard, stop: threading.Event | None) -> dict:
    """Eight claimer threads (t0-t7) racing the race's processes; what each claims, by owner."""
    claimed: dict[str, list[int]] = {}
    for i in range(8):
        owner = f"t{i}"
        claimed[owner] = []
        race.thread(thread_claimer, board, owner, claimed[owner], stop)
    race.go()
    return claimed


def test_routed_tasks_go_only_to_the_members_they_allow(board_backend: Backend) -> None:
    board = board_backend.board()
    fill_routed(board, 100)
    race = Race(TIMEOUT)
    for p in ("p0", "p1", "p2", "p3"):
        race.process(p, CLAIMER, board_backend.spec, p, ROLES[p] or "", "0")
    claimed = start_all(race, board, None)
    for name, out in race.finish().items():  # every process exited 0, no thread raised
        claimed[name] = json.loads(out)
    ids = [i for got in claimed.values() for i in got]
    assert sorted(ids) == list(range(1, 101)), Counter(ids).most_common(3)  # each exactly once
    fresh = board_backend.board()
    for task in fresh.snapshot().tasks:
        assert task.status == "completed"
        assert refusal(task, task.owner, ROLES[task.owner]) is None, (task, task.owner)
        assert task.result == f"done by {task.owner}"
    claims, _ = replay(fresh.events())
    assert claims == 100
    assert {o for o, got in claimed.items() if got} >= {"p0", "p2", "t0", "t5"}  # all competed
    assert claimed["p3"] == [i for i in claimed["p3"]
                             if fresh.get(i).assignee in (None, "p3") and fresh.get(i).role is None]


def test_rerouting_while_they_claim_never_hands_a_task_to_the_wrong_member(
        board_backend: Backend) -> None:
    board = board_backend.board()
    fill_routed(board, 40)
    race = Race(TIMEOUT)
    for p in ("p0", "p1", "p2"):
        race.process(p, CLAIMER, board_backend.spec, p, ROLES[p] or "", "1")
    router = ready(launch(REROUTER, board_backend.spec, ",".join(NAMES)))
    stop = threading.Event()
    go(router)
    claimed = start_all(race, board, stop)
    out, err = router.communicate(timeout=TIMEOUT)
    assert router.returncode == 0, err
    updated, refused = json.loads(out)
    stop.set()
    for name, out in race.finish().items():  # every process exited 0, no thread raised
        claimed[name] = json.loads(out)
    fresh = board_backend.board()
    assert fresh.doctor() == []
    assert all(t.status == "completed" for t in fresh.snapshot().tasks)
    claims, updates = replay(fresh.events())
    assert claims == 40
    assert updates <= updated and updated > 0 and refused > 0  # it raced with the claims


# Creates routed tasks, re-routes, claims, completes and releases at random, forever.
CHAOS = r"""
import random, sys
from support.board_backends import open_board
from agent_cli.errors import Refused
board = open_board(sys.argv[1])
rng = random.Random(int(sys.argv[2]))
roles = {"t0": "tester", "t4": "writer", "p3": None}
board.create("seed", role="tester")
print("ready", flush=True)
while True:
    owner = rng.choice(sorted(roles))
    held = board.held_by(owner)
    roll = rng.random()
    try:
        if roll < 0.25:
            board.create("t", assignee=rng.choice([None, "t0", "t4", "p3"]),
                         role=rng.choice([None, "tester", "writer"]))
        elif roll < 0.5:
            ids = [t.id for t in board.snapshot().tasks]
            board.update(rng.choice(ids), assignee=rng.choice(["", "t0", "t4", "p3"]),
                         role=rng.choice(["", "tester", "writer"]))
        elif held is None:
            board.claim_next(owner, roles[owner])
        elif roll < 0.85:
            board.complete(held.id, owner, held.claim_token, "ok")
        else:
            board.release(held.id, owner, "random")
    except Refused:
        pass
"""


def test_sigkilled_reroutes_and_claims_never_leave_a_task_with_the_wrong_owner(
    board_backend: Backend,
) -> None:
    import signal

    rng = random.Random(99)
    for round_no in range(4):
        procs = [launch(CHAOS, board_backend.spec, str(round_no * 2 + k)) for k in range(2)]
        procs = [ready(p) for p in procs]
        threading.Event().wait(rng.uniform(0.05, 0.3))  # let them run, then kill mid-flight
        for proc in procs:
            proc.send_signal(signal.SIGKILL)
        for proc in procs:
            proc.wait(TIMEOUT)
        board = board_backend.board()
        assert board.doctor() == [], f"round {round_no}"
        for task in board.snapshot().tasks:
            if task.status != "pending":  # routing cannot change once claimed
                assert refusal(task, task.owner, ROLES[task.owner]) is None, (round_no, task)
        replay(board.events())
