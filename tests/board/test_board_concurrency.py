"""Many claimers, threads and processes, on one board: every task is owned exactly once,
nothing is lost, and a writer killed at any moment never leaves a broken board. The races run
on both backends; the killed file writers on files (tests/pg has the database's)."""

from __future__ import annotations

import json
import random
import signal
import threading
from collections import Counter
from pathlib import Path

import pytest
from support.board_backends import Backend
from support.race import TIMEOUT, Race, launch, ready

from agent_cli.board import TaskBoard

# A claimer process: waits for "go" on stdin, claims and completes until nothing is left,
# prints the ids it claimed as JSON.
CLAIMER = r"""
import json, sys
from support.board_backends import open_board
board = open_board(sys.argv[1])
owner = sys.argv[2]
print("ready", flush=True)
sys.stdin.readline()
got = []
while True:
    task = board.claim_next(owner).task
    if task is None:
        break
    got.append(task.id)
    board.complete(task.id, owner, task.claim_token, f"done by {owner}")
print(json.dumps(got), flush=True)
"""

# A writer that never stops: creates, claims, completes and releases at random.
WRITER = r"""
import random, sys
from pathlib import Path
import pytest

from agent_cli.board import TaskBoard
from agent_cli.errors import Refused
board = TaskBoard(Path(sys.argv[1]))
rng = random.Random(int(sys.argv[2]))
owners = ["w%s%d" % (sys.argv[2], i) for i in range(3)]
board.create("seed")
print("ready", flush=True)
while True:
    owner = rng.choice(owners)
    held = board.held_by(owner)
    roll = rng.random()
    if held is None and roll < 0.35:
        ids = [t.id for t in board.snapshot().tasks]
        deps = rng.sample(ids, k=min(len(ids), rng.randint(0, 2)))
        board.create("task %d" % rng.randint(0, 10**6), blocked_by=deps)
    elif held is None:
        board.claim_next(owner)
    elif roll < 0.8:
        board.complete(held.id, owner, held.claim_token, "x" * rng.randint(0, 500))
    else:
        board.release(held.id, owner, "random release")
"""


def fill(board: TaskBoard, n: int) -> None:
    for i in range(n):
        board.create(f"task {i}")


def claim_all(board: TaskBoard, owner: str, got: list[int]) -> None:
    """Claim and complete until nothing is left; the ids claimed go to `got`."""
    while True:
        task = board.claim_next(owner).task
        if task is None:
            return
        got.append(task.id)
        board.complete(task.id, owner, task.claim_token, f"done by {owner}")


def claimers(race: Race, boards: list[TaskBoard]) -> dict[str, list[int]]:
    """One racer thread per board (t0, t1, ...); what each claims, by owner."""
    claimed: dict[str, list[int]] = {}
    for i, board in enumerate(boards):
        claimed[f"t{i}"] = []
        race.thread(claim_all, board, f"t{i}", claimed[f"t{i}"])
    return claimed


def check_each_task_owned_once(backend: Backend, claimed: dict[str, list[int]], n: int) -> None:
    all_ids = [i for ids in claimed.values() for i in ids]
    assert sorted(all_ids) == list(range(1, n + 1)), Counter(all_ids).most_common(3)
    board = backend.board()
    snap = board.snapshot()
    assert snap.problems == []
    owner_of = {i: o for o, ids in claimed.items() for i in ids}
    for task in snap.tasks:
        assert task.status == "completed"
        assert task.owner == owner_of[task.id]
        assert task.result == f"done by {task.owner}"
    events = Counter(e["action"] for e in board.events())
    assert events == {"created": n, "claimed": n, "completed": n}


def test_eight_threads_share_one_board(board_backend: Backend) -> None:
    board = board_backend.board()
    fill(board, 200)
    race = Race(TIMEOUT)
    claimed = claimers(race, [board] * 8)
    race.go()
    race.finish()  # no racer raised
    check_each_task_owned_once(board_backend, claimed, 200)
    assert sum(1 for ids in claimed.values() if ids) > 1  # they really competed


def test_eight_threads_with_their_own_board_instances(board_backend: Backend) -> None:
    fill(board_backend.board(), 200)
    boards = [board_backend.board() for _ in range(8)]
    race = Race(TIMEOUT)
    claimed = claimers(race, boards)
    race.go()
    race.finish()  # no racer raised
    check_each_task_owned_once(board_backend, claimed, 200)


def test_four_processes_and_eight_threads_claim_together(board_backend: Backend) -> None:
    board = board_backend.board()
    fill(board, 200)
    race = Race(TIMEOUT)
    for i in range(4):
        race.process(f"p{i}", CLAIMER, board_backend.spec, f"p{i}")
    claimed = claimers(race, [board] * 8)
    race.go()
    for name, out in race.finish().items():  # every process exited 0, no thread raised
        claimed[name] = json.loads(out)
    check_each_task_owned_once(board_backend, claimed, 200)
    assert sum(len(claimed[p]) for p in race.procs) > 0


def test_c_goes_to_exactly_one_of_many_racing_claimers(board_backend: Backend) -> None:
    board = board_backend.board()
    a, b = board.create("A"), board.create("B")
    c = board.create("C", blocked_by=[a.id, b.id])
    first: dict[str, int] = {}

    def grab(owner: str) -> None:
        first[owner] = board.claim_next(owner).task.id

    pair = Race(TIMEOUT)
    for owner in ("alice", "bob"):
        pair.thread(grab, owner)
    pair.go()
    pair.finish()
    assert sorted(first.values()) == [a.id, b.id]
    for owner, tid in first.items():
        board.complete(tid, owner, board.get(tid).claim_token, "ok")
    # six threads and three processes race for C
    race = Race(TIMEOUT)
    for i in range(3):
        race.process(f"p{i}", CLAIMER, board_backend.spec, f"p{i}")
    won: list[str] = []

    def grab_c(owner: str) -> None:
        if board.claim_next(owner).task is not None:
            won.append(owner)

    for i in range(6):
        race.thread(grab_c, f"r{i}")
    race.go()
    for name, out in race.finish().items():  # every process exited 0, no thread raised
        if json.loads(out):
            won.append(name)
    assert len(won) == 1, won
    final = board.get(c.id)
    assert final.owner == won[0]


@pytest.mark.slow
def test_sigkilled_writers_never_break_the_board(workdir: Path) -> None:
    tasks_dir = workdir / ".tasks"
    rng = random.Random(1234)
    for round_no in range(30):
        writers = [ready(p) for p in [launch(WRITER, str(tasks_dir), str(k)) for k in range(2)]]
        # let them run a random while, then kill each mid-flight
        threading.Event().wait(rng.uniform(0.0, 0.08))
        for proc in writers:
            proc.send_signal(signal.SIGKILL)
        for proc in writers:
            proc.wait(TIMEOUT)
            assert proc.returncode == -signal.SIGKILL, proc.stderr.read()
        board = TaskBoard(tasks_dir)
        assert board.doctor() == [], f"round {round_no}"
        snap = board.snapshot()
        for task in snap.tasks:
            on_disk = json.loads((tasks_dir / f"task_{task.id}.json").read_text())
            assert on_disk["id"] == task.id
        holders = Counter(t.owner for t in snap.tasks if t.status == "in_progress")
        assert all(n == 1 for n in holders.values()), holders
        board.events()  # parses, whatever the last line looks like
        created = [e["task_id"] for e in board.events() if e["action"] == "created"]
        assert len(created) == len(set(created))
    # the board still works after all that
    board = TaskBoard(tasks_dir)
    new = board.create("after the storm")
    assert new.id > max(t.id for t in board.snapshot().tasks if t.id != new.id)
