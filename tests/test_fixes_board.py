"""Regression tests for the events.jsonl gap: a board write that dies between its task file and
its event append has its event appended by the next locked reader, exactly once, and only if
the task write landed."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections import Counter

import pytest

from agent_cli.board import section as store_mod
from agent_cli.board.store import TaskBoard
from agent_cli.errors import StorageError

KILL_AFTER_APPEND = """
import os, signal, sys
from pathlib import Path
from agent_cli.board import section as store
from agent_cli.board.store import TaskBoard

board = TaskBoard(Path(sys.argv[1]) / ".tasks")
real = store.write_journal

def write_journal(path, journal):
    if not journal.pending:  # the writer is done and drops its pending events: die first
        os.kill(os.getpid(), signal.SIGKILL)
    real(path, journal)

store.write_journal = write_journal
board.claim_next("dead")
"""


def _stamp_lines(workdir) -> list[str]:
    return (workdir / ".tasks" / ".stamp").read_text().splitlines()


def test_an_event_already_appended_by_a_killed_writer_is_not_appended_again(workdir):
    TaskBoard(workdir / ".tasks").create("one")
    done = subprocess.run([sys.executable, "-c", KILL_AFTER_APPEND, str(workdir)], timeout=30)
    assert done.returncode == -signal.SIGKILL
    assert len(_stamp_lines(workdir)) == 3  # the pending events are still in the stamp

    board = TaskBoard(workdir / ".tasks")
    claims = [e for e in board.events() if e["action"] == "claimed"]
    assert [(e["task_id"], e["actor"]) for e in claims] == [(1, "dead")]
    assert len(_stamp_lines(workdir)) == 2  # settled
    board.create("two")  # the next write goes on normally
    assert Counter(e["action"] for e in board.events()) == {"created": 2, "claimed": 1}


def test_the_event_of_a_write_that_did_not_land_is_never_appended(workdir, monkeypatch):
    board = TaskBoard(workdir / ".tasks")
    board.create("one")

    def full_disk(path, data):
        raise StorageError(f"cannot write {path}: No space left on device")

    with monkeypatch.context() as m:
        m.setattr(store_mod, "atomic_write_json", full_disk)
        with pytest.raises(StorageError):
            board.claim_next("alice")
    assert board.get(1).status == "pending"
    assert [e["action"] for e in board.events()] == ["created"]
    assert len(_stamp_lines(workdir)) == 2  # the dead write's events were dropped
    board.claim_next("alice")
    assert [e["action"] for e in board.events()] == ["created", "claimed"]


def test_every_event_carries_a_unique_id(workdir):
    board = TaskBoard(workdir / ".tasks")
    board.create("one")
    board.create("two", blocked_by=[1])
    token = board.claim(1, "alice").claim_token
    board.complete(1, "alice", token, "ok")
    ids = [e["id"] for e in board.events()]
    assert len(ids) == 4 and len(set(ids)) == 4
    assert all(i.split("/")[0].split(":")[1].isdigit() for i in ids)
