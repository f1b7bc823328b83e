"""Expired leases under contention: 8 threads and 4 processes race on one board whose every
claim has just expired. Each lease is taken back exactly once, each task is then owned by
one claimer at a time and completed exactly once, and no token is used twice. On both backends."""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from pathlib import Path

from support.board_backends import Backend
from support.race import Race

from agent_cli.board.store import TaskBoard

TASKS = 40
LEASE_S = 600.0
LATER = 2 * LEASE_S  # the racers' clocks are this far ahead: every ghost lease has run out

RACER = r"""
import json, sys, time
from support.board_backends import open_board
board = open_board(sys.argv[1], clock=lambda: time.time() + float(sys.argv[3]))
owner = sys.argv[2]
print("ready", flush=True)
sys.stdin.readline()
done = []
board.snapshot()
while True:
    task = board.claim_next(owner).task
    if task is None:
        break
    board.complete(task.id, owner, task.claim_token, owner)
    done.append([task.id, task.claim_token])
print(json.dumps(done), flush=True)
"""


def _later() -> float:
    return time.time() + LATER


def _race(board: TaskBoard, owner: str, out: list) -> None:
    board.doctor()  # an operation that sweeps, like any other
    while (task := board.claim_next(owner).task) is not None:
        board.complete(task.id, owner, task.claim_token, owner)
        out.append((task.id, task.claim_token))


def test_expiry_races_between_threads_and_processes_take_each_lease_back_once(
        board_backend: Backend) -> None:
    setup = board_backend.board(lease_s=LEASE_S)
    ghosts = []
    for n in range(TASKS):
        setup.create(f"t{n}")
        ghosts.append(setup.claim_next(f"ghost{n}").task)  # each held by a vanished owner
    race = Race()
    for i in range(4):
        race.process(f"p{i}", RACER, board_backend.spec, f"p{i}", str(LATER))
    results: list[list] = [[] for _ in range(8)]
    for i in range(8):
        race.thread(_race, board_backend.board(clock=_later), f"t{i}", results[i])
    race.go()
    outputs = race.finish()  # every process exited 0, every thread ended
    done = [tuple(x) for r in results for x in r]
    for out in outputs.values():
        done += [tuple(x) for x in json.loads(out)]

    log = board_backend.board().events()
    expired = Counter(e["task_id"] for e in log if e["action"] == "lease_expired")
    assert expired == Counter(range(1, TASKS + 1))  # exactly once each
    assert {e["details"]["token"] for e in log if e["action"] == "lease_expired"} == {
        g.claim_token for g in ghosts}
    completions = Counter(e["task_id"] for e in log if e["action"] == "completed")
    assert completions == Counter(range(1, TASKS + 1))
    assert sorted(tid for tid, _ in done) == list(range(1, TASKS + 1))
    tokens = [tok for _, tok in done] + [g.claim_token for g in ghosts]
    assert len(set(tokens)) == len(tokens)  # no token handed out twice
    assert all(t.status == "completed" for t in board_backend.board().snapshot().tasks)
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    from soak_checks import replay_events

    assert replay_events(log)[2] == []
