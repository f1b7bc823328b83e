"""The board announces its own changes: one TaskEvent per events.jsonl record, after on_change,
never doubled, and nothing for a call that changed nothing. On both backends but for the
teammate's run (a runtime on files)."""

from __future__ import annotations

import threading
from typing import Any

from support.board_backends import Backend
from support.team import WAIT, Recorder, complete_claimed, make_runtime

from agent_cli.events import TaskEvent
from agent_cli.models.scripted import ScriptedModel


def _board(backend: Backend, **kw) -> tuple[Any, list]:
    seen: list = []
    board = backend.board(on_change=lambda: seen.append("change"), on_event=seen.append, **kw)
    return board, seen


def _told(seen: list) -> list[tuple]:
    return [(e.agent, e.action, e.task_id, e.subject, e.detail)
            for e in seen if isinstance(e, TaskEvent)]


def test_every_board_action_is_announced_once_as_it_is_logged(board_backend):
    board, seen = _board(board_backend)
    board.create("write docs", actor="lead")
    board.create("ship", blocked_by=[1], actor="alice")
    board.update(2, role="writer", actor="lead")
    first = board.claim(1, "alice")
    board.release(1, "alice", reason="shutdown")
    again = board.claim_next("bob", detail="auto-claimed").task
    board.complete(again.id, "bob", again.claim_token, "docs written")
    assert first.id == again.id == 1
    assert _told(seen) == [
        ("lead", "created", 1, "write docs", ""),
        ("alice", "created", 2, "ship", ""),
        ("lead", "updated", 2, "ship", ""),
        ("alice", "claimed", 1, "write docs", ""),
        ("alice", "released", 1, "write docs", "shutdown"),
        ("bob", "claimed", 1, "write docs", "auto-claimed"),
        ("bob", "completed", 1, "write docs", "docs written"),
    ]
    logged = [(e["actor"], e["action"], e["task_id"]) for e in board.events()]
    assert logged == [(a, act, tid) for a, act, tid, _, _ in _told(seen)]
    # each write: on_change first, then its event
    assert seen[::2] == ["change"] * 7 and all(isinstance(e, TaskEvent) for e in seen[1::2])


def test_a_call_that_changes_nothing_announces_nothing(board_backend):
    board, seen = _board(board_backend)
    board.create("a")
    board.create("b", blocked_by=[1])
    board.claim(1, "alice")
    seen.clear()
    assert board.claim_next("bob").task is None  # nothing claimable
    board.update(2, add_blocked_by=[1])  # already blocked by #1: unchanged
    board.renew(["alice"])  # a write, but no event record: no news
    board.snapshot()
    board.events()
    assert seen == []


def test_a_lease_taken_back_is_announced_by_the_host(board_backend):
    clock = {"t": 1000.0}
    board, seen = _board(board_backend, lease_s=60, clock=lambda: clock["t"])
    board.create("long job")
    board.claim(1, "alice")
    seen.clear()
    clock["t"] += 120
    assert board.get(1).status == "pending"  # any operation takes the lease back
    assert _told(seen)[0][:4] == ("host", "lease_expired", 1, "long job")
    assert seen[0] == "change" and len(_told(seen)) == 1
    assert [e["action"] for e in board.events()][-1] == "lease_expired"


def test_verify_failed_is_announced_but_not_logged(board_backend):
    board, seen = _board(board_backend)
    task = board.create("checked")
    board.claim(task.id, "alice")
    seen.clear()
    board.verify_failed(task, "alice", "exit 1, expected 0")
    assert _told(seen) == [("alice", "verify_failed", 1, "checked", "exit 1, expected 0")]
    assert "change" not in seen
    assert [e["action"] for e in board.events()] == ["created", "claimed"]


def test_held_notices_wait_for_the_end_of_the_block_but_wake_ups_do_not(board_backend):
    seen: list = []
    committed = threading.Event()
    board = board_backend.board(on_event=seen.append,
                                on_change=lambda: (seen.append("change"), committed.set()))
    board.create("a")
    seen.clear()
    other: list = []
    with board.notices_held():
        board.claim(1, "alice")
        assert seen == ["change"]  # the wake-up at once
        committed.clear()
        t = threading.Thread(target=lambda: (board.create("b"), other.extend(seen)))
        t.start()
        assert committed.wait(WAIT)  # the other thread's change is made and woke waiters...
        assert [e for e in seen if isinstance(e, TaskEvent)] == []  # ...but is not told yet
    t.join(WAIT)
    assert [e.action for e in seen if isinstance(e, TaskEvent)] == ["claimed", "created"]
    # the other thread went on only once its own change had been told, after the held one
    assert [e.action for e in other if isinstance(e, TaskEvent)] == ["claimed", "created"]
    assert [e["action"] for e in board.events()][1:] == ["claimed", "created"]  # commit order


def test_a_teammate_claim_and_completion_each_show_once(workdir, cleanup):
    model = ScriptedModel({"alice": [complete_claimed("all done")]})
    rt = make_runtime(workdir, model)
    cleanup(rt)
    rec = Recorder(rt)
    task = rt.board.create("the job")
    rt.team.spawn("alice", "worker")
    rec.wait_event("TaskEvent", action="completed", task_id=task.id)
    assert rt.team.wait_quiet(WAIT)
    told = [(e.agent, e.action, e.detail) for e in rec.of("TaskEvent", task_id=task.id)]
    assert told == [("lead", "created", ""), ("alice", "claimed", "auto-claimed"),
                    ("alice", "completed", "all done")]
    assert [(e["actor"], e["action"]) for e in rt.board.events()] == [a[:2] for a in told]


def test_a_teammate_woken_by_a_completion_is_told_after_it_in_commit_order(board_backend):
    """The REPL feed showed "bob claimed #2" before "coder completed #1" (which unblocked
    it): the completion woke bob, whose claim was announced first. The board tells both in
    the order it committed them, whichever thread gets there first."""
    told: list[tuple[str, str, int]] = []
    woken = threading.Event()

    def wake() -> None:  # as a change wakes an idle teammate: it claims before we go on
        if woken.is_set():
            woken.clear()
            t = threading.Thread(target=lambda: board.claim_next("bob"))
            t.start()
            t.join(WAIT)

    board = board_backend.board(on_change=wake,
                                on_event=lambda e: told.append((e.agent, e.action, e.task_id)))
    board.create("expected", actor="lead")
    board.create("verify", blocked_by=[1], actor="lead")
    held = board.claim(1, "coder")
    woken.set()
    board.complete(1, "coder", held.claim_token, "42")
    assert told[-2:] == [("coder", "completed", 1), ("bob", "claimed", 2)]
    logged = [(e["actor"], e["action"], e["task_id"]) for e in board.events()]
    assert told == logged
