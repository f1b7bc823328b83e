"""Many claimers, threads and processes, on one board: every task is owned exactly once,
nothing is lost, and a writer killed at any moment never leaves a broken board."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import pytest

from agent_cli.board import TaskBoard

TIMEOUT = 60

# A claimer process: waits for "go" on stdin, claims and completes until nothing is left,
# prints the ids it claimed as JSON.
CLAIMER = r"""
import json, sys
from pathlib import Path
import pytest

from agent_cli.board import TaskBoard
board = TaskBoard(Path(sys.argv[1]))
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


def env() -> dict[str, str]:
    src = str(Path(__file__).resolve().parents[2])
    return {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}


def launch(script: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", script, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env(),
    )


def ready(proc: subprocess.Popen) -> subprocess.Popen:
    """Block until the process says it is ready (its first line), then return it."""
    line = proc.stdout.readline()
    assert line == "ready\n", proc.stderr.read()
    return proc


def fill(board: TaskBoard, n: int) -> None:
    for i in range(n):
        board.create(f"task {i}")


def thread_claimer(
    board: TaskBoard,
    owner: str,
    start: threading.Barrier,
    got: list[int],
    errors: list[BaseException],
) -> None:
    try:
        start.wait(TIMEOUT)
        while True:
            task = board.claim_next(owner).task
            if task is None:
                return
            got.append(task.id)
            board.complete(task.id, owner, task.claim_token, f"done by {owner}")
    except BaseException as exc:  # reported by the test, not lost in the thread
        errors.append(exc)


def run_threads(boards: list[TaskBoard], start: threading.Barrier) -> tuple[dict, list, list]:
    claimed: dict[str, list[int]] = {}
    errors: list[BaseException] = []
    threads = []
    for i, board in enumerate(boards):
        owner = f"t{i}"
        claimed[owner] = []
        threads.append(
            threading.Thread(
                target=thread_claimer, args=(board, owner, start, claimed[owner], errors)
            )
        )
    for t in threads:
        t.start()
    return claimed, errors, threads


def check_each_task_owned_once(tasks_dir: Path, claimed: dict[str, list[int]], n: int) -> None:
    all_ids = [i for ids in claimed.values() for i in ids]
    assert sorted(all_ids) == list(range(1, n + 1)), Counter(all_ids).most_common(3)
    board = TaskBoard(tasks_dir)
    snap = board.snapshot()
    assert snap.problems == []
    owner_of = {i: o for o, ids in claimed.items() for i in ids}
    for task in snap.tasks:
        assert task.status == "completed"
        assert task.owner == owner_of[task.id]
        assert task.result == f"done by {task.owner}"
    events = Counter(e["action"] for e in board.events())
    assert events == {"created": n, "claimed": n, "completed": n}


def test_eight_threads_share_one_board(workdir: Path) -> None:
    board = TaskBoard(workdir / ".tasks")
    fill(board, 200)
    claimed, errors, threads = run_threads([board] * 8, threading.Barrier(8))
    for t in threads:
        t.join(TIMEOUT)
    assert not errors
    check_each_task_owned_once(board.dir, claimed, 200)
    assert sum(1 for ids in claimed.values() if ids) > 1  # they really competed


def test_eight_threads_with_their_own_board_instances(workdir: Path) -> None:
    fill(TaskBoard(workdir / ".tasks"), 200)
    boards = [TaskBoard(workdir / ".tasks") for _ in range(8)]
    claimed, errors, threads = run_threads(boards, threading.Barrier(8))
    for t in threads:
        t.join(TIMEOUT)
    assert not errors
    check_each_task_owned_once(workdir / ".tasks", claimed, 200)


def test_four_processes_and_eight_threads_claim_together(workdir: Path) -> None:
    tasks_dir = workdir / ".tasks"
    board = TaskBoard(tasks_dir)
    fill(board, 200)
    procs = {f"p{i}": launch(CLAIMER, str(tasks_dir), f"p{i}") for i in range(4)}
    for proc in procs.values():
        ready(proc)
    start = threading.Barrier(9)
    claimed, errors, threads = run_threads([board] * 8, start)
    for proc in procs.values():
        proc.stdin.write("go\n")
        proc.stdin.flush()
    start.wait(TIMEOUT)
    for name, proc in procs.items():
        out, err = proc.communicate(timeout=TIMEOUT)
        assert proc.returncode == 0, err
        claimed[name] = json.loads(out)
    for t in threads:
        t.join(TIMEOUT)
    assert not errors
    check_each_task_owned_once(tasks_dir, claimed, 200)
    assert sum(len(claimed[p]) for p in procs) > 0


def test_c_goes_to_exactly_one_of_many_racing_claimers(workdir: Path) -> None:
    board = TaskBoard(workdir / ".tasks")
    a, b = board.create("A"), board.create("B")
    c = board.create("C", blocked_by=[a.id, b.id])
    start = threading.Barrier(2)
    first: dict[str, int] = {}

    def grab(owner: str) -> None:
        start.wait(TIMEOUT)
        first[owner] = board.claim_next(owner).task.id

    threads = [threading.Thread(target=grab, args=(o,)) for o in ("alice", "bob")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT)
    assert sorted(first.values()) == [a.id, b.id]
    for owner, tid in first.items():
        board.complete(tid, owner, board.get(tid).claim_token, "ok")
    # six threads and three processes race for C
    procs = [ready(p) for p in [launch(CLAIMER, str(board.dir), f"p{i}") for i in range(3)]]
    racers = threading.Barrier(6)
    won: list[str] = []

    def race(owner: str) -> None:
        racers.wait(TIMEOUT)
        if board.claim_next(owner).task is not None:
            won.append(owner)

    threads = [threading.Thread(target=race, args=(f"r{i}",)) for i in range(6)]
    for proc in procs:
        proc.stdin.write("go\n")
        proc.stdin.flush()
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT)
    for i, proc in enumerate(procs):
        out, err = proc.communicate(timeout=TIMEOUT)
        assert proc.returncode == 0, err
        if json.loads(out):
            won.append(f"p{i}")
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
