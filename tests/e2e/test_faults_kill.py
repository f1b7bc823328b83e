"""SIGKILL at random points of a create, a claim, a completion, an inbox append and an ack.

Each round starts a child process (this file run as a script) that loops over those steps on
a shared workdir. Most rounds arm a crash point: the child counts its write-path system calls
(os.write, os.fsync, os.replace) and SIGKILLs itself at a random one -- halfway through a
write, so an append is torn. Other rounds are killed from outside after a random number of
steps. After every round the parent checks what a restarted session relies on:

- `agent-cli tasks doctor` is clean (no corrupt task file, no owner holding two tasks);
- the dead process's in_progress task is recovered with `agent-cli tasks release`;
- no task is owned twice: a claim token a child saw is only ever honoured once;
- no message whose send returned is lost: at the end every one was fetched, and none that
  was fetched *and acknowledged* comes back again (at-least-once, never after an ack).

Set AGENT_CLI_SLOW=1 for 100 rounds instead of the default 24.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

ROUNDS = 100 if os.environ.get("AGENT_CLI_SLOW") else 24
STEPS = 40  # loop iterations per child (a crash usually comes first)
READER = "alice"


# ----- the child --------------------------------------------------------------------------
def _arm_crash(countdown: int) -> None:
    """SIGKILL this process at the `countdown`-th write-path system call (a write is torn)."""
    state = {"left": countdown}
    real_write, real_fsync, real_replace = os.write, os.fsync, os.replace

    def tick() -> bool:
        state["left"] -= 1
        return state["left"] == 0

    def write(fd, data):
        if tick():
            real_write(fd, bytes(data)[: max(1, len(data) // 2)])
            os.kill(os.getpid(), signal.SIGKILL)
        return real_write(fd, data)

    def fsync(fd):
        if tick():
            os.kill(os.getpid(), signal.SIGKILL)
        return real_fsync(fd)

    def replace(src, dst, **dir_fds):
        if tick():
            os.kill(os.getpid(), signal.SIGKILL)
        return real_replace(src, dst, **dir_fds)

    os.write, os.fsync, os.replace = write, fsync, replace


def child(workdir: str, owner: str, countdown: int) -> None:
    from agent_cli.board.store import TaskBoard
    from agent_cli.errors import Refused
    from agent_cli.team.mailbox import Mailbox

    board = TaskBoard(Path(workdir) / ".tasks")
    mail = Mailbox(Path(workdir) / ".team")
    if countdown:
        _arm_crash(countdown)

    def say(*parts: object) -> None:
        print(*parts, flush=True)

    say("ready")
    for i in range(STEPS):
        task = board.create(f"{owner} step {i}", actor="lead")
        say("created", task.id)
        try:
            claimed = board.claim_next(owner).task
        except Refused:
            claimed = None
        if claimed is not None:
            say("claimed", claimed.id, claimed.claim_token)
            board.complete(claimed.id, owner, claimed.claim_token, "done")
            say("completed", claimed.id, claimed.claim_token)
        token = f"{owner}:{i}"
        mail.send(owner, READER, f"kill-msg {token}")
        say("sent", token)
        delivery = mail.fetch(READER)
        say("fetched", *[m.content.split()[1] for m in delivery.messages])
        mail.ack(READER, delivery.cursor)
        say("acked", *[m.content.split()[1] for m in delivery.messages])


# ----- the parent -------------------------------------------------------------------------
def cli(*argv: str) -> tuple[int, str]:
    from agent_cli import cli as cli_mod

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = cli_mod.main(list(argv))
    return code, out.getvalue()


def run_round(workdir: Path, owner: str, rng: random.Random) -> list[list[str]]:
    """One child; returns its progress lines (split), the last one possibly cut short."""
    external = rng.random() < 0.25
    countdown = 0 if external else rng.randint(1, 120)
    proc = subprocess.Popen(
        [sys.executable, __file__, str(workdir), owner, str(countdown)],
        stdout=subprocess.PIPE, text=True,
    )
    lines: list[list[str]] = []
    kill_after = rng.randint(1, 60) if external else None
    assert proc.stdout is not None
    # Read to the end even after the kill: the child runs on until the signal lands, and a
    # line it printed meanwhile ("fetched", "acked") is progress the checks must count --
    # a message it fetched and acknowledged there would otherwise look lost.
    for raw in proc.stdout:
        lines.append(raw.split())
        if kill_after is not None and len(lines) == kill_after:
            proc.send_signal(signal.SIGKILL)
    proc.stdout.close()
    code = proc.wait(timeout=30)
    assert code in (0, -signal.SIGKILL), f"child {owner} exited {code}"
    return lines


def recover(workdir: Path, owner: str) -> list[int]:
    """Release the dead owner's in_progress tasks the documented way (the command line)."""
    code, out = cli("-C", str(workdir), "tasks", "list", "--json")
    assert code == 0, out
    held = [t["id"] for t in json.loads(out[out.index("[") :])
            if t["status"] == "in_progress" and t["owner"] == owner]
    for tid in held:
        code, out = cli("-C", str(workdir), "tasks", "release", str(tid), "--as", owner)
        assert code == 0, out
        assert f"#{tid} released" in out
    return held


def test_sigkill_at_random_points_loses_nothing_and_doubles_nothing(workdir):
    from agent_cli.board.store import TaskBoard
    from agent_cli.team.mailbox import Mailbox

    rng = random.Random(1234)
    sent: set[str] = set()
    fetched: set[str] = set()
    acked: set[str] = set()
    honoured: dict[str, int] = {}  # claim token -> task id completed with it
    kills = releases = 0
    for r in range(ROUNDS):
        owner = f"k{r}"
        lines = run_round(workdir, owner, rng)
        kills += not lines or lines[-1][0] != "acked" or len(lines) < 1 + STEPS * 6
        for word, *rest in lines:
            if word == "sent":
                sent.add(rest[0])
            elif word == "fetched":
                again = acked.intersection(rest)
                assert not again, f"round {r}: {sorted(again)} came back after their ack"
                fetched.update(rest)
            elif word == "acked":
                acked.update(rest)
            elif word == "completed":
                assert rest[1] not in honoured, f"claim token of task {rest[0]} used twice"
                honoured[rest[1]] = int(rest[0])
        releases += len(recover(workdir, owner))
        code, out = cli("-C", str(workdir), "tasks", "doctor")
        assert code == 0, f"round {r}: doctor found problems:\n{out}"

    board = TaskBoard(workdir / ".tasks")
    tasks = board.snapshot().tasks
    assert not [t.id for t in tasks if t.status == "in_progress"]
    assert len({t.id for t in tasks}) == len(tasks)
    completed = {t.id for t in tasks if t.status == "completed"}
    assert set(honoured.values()) <= completed
    # the last fetch drains whatever the last killed reader had not acknowledged
    mail = Mailbox(workdir / ".team")
    final = mail.fetch(READER)
    assert not acked.intersection(m.content.split()[1] for m in final.messages)
    fetched.update(m.content.split()[1] for m in final.messages)
    assert sent <= fetched, f"lost: {sorted(sent - fetched)[:10]}"
    assert kills >= ROUNDS // 2  # most rounds really died mid-way
    assert releases > 0  # some deaths left a task in progress, and release recovered it



KILL_BEFORE_EVENT = """
import os, signal, sys
from pathlib import Path
from agent_cli.board import section as store
from agent_cli.board.store import TaskBoard

board = TaskBoard(Path(sys.argv[1]) / ".tasks")
store.append_event = lambda path, record: os.kill(os.getpid(), signal.SIGKILL)
board.claim_next("dead")
"""


def test_a_kill_between_the_task_write_and_the_event_append_keeps_the_log_consistent(workdir):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    from soak_checks import replay_events

    from agent_cli.board.store import TaskBoard

    TaskBoard(workdir / ".tasks").create("one")
    done = subprocess.run([sys.executable, "-c", KILL_BEFORE_EVENT, str(workdir)], timeout=30)
    assert done.returncode == -signal.SIGKILL
    board = TaskBoard(workdir / ".tasks")
    assert board.get(1).owner == "dead"  # the claim itself took effect
    state, _, _ = replay_events(board.events())
    assert state[1] == ("in_progress", "dead")

if __name__ == "__main__":
    child(sys.argv[1], sys.argv[2], int(sys.argv[3]))
