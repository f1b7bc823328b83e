"""The soak's invariants, checked on disk after the run (bench/soak.py; tests/e2e/test_soak_*.py).

Each check returns one line per violation, naming the task, the message or the file, so a
failing soak says exactly what was lost, doubled or left behind.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

from agent_cli.team.mailbox import parse_line


def replay_events(events: list[dict[str, Any]]) -> tuple[dict[int, tuple[str, str | None]],
                                                         Counter[int], list[str]]:
    """Replay events.jsonl: final (status, owner) per task, completions per task, violations.

    A claim of a task that is not pending, a completion, release or lease expiry of anyone
    but the current holder, and a second completion are violations: that is what owned twice means.
    """
    state: dict[int, tuple[str, str | None]] = {}
    completions: Counter[int] = Counter()
    bad: list[str] = []
    for n, e in enumerate(events, start=1):
        tid, action = e.get("task_id"), e.get("action")
        owner = (e.get("details") or {}).get("owner")
        status, holder = state.get(tid, ("missing", None))
        if action == "created":
            if tid in state:
                bad.append(f"event {n}: task {tid} created twice")
            state[tid] = ("pending", None)
        elif action == "claimed":
            if status != "pending":
                bad.append(f"event {n}: {owner} claimed task {tid} while it was {status} "
                           f"({holder})")
            state[tid] = ("in_progress", owner)
        elif action == "completed":
            completions[tid] += 1
            if status != "in_progress" or holder != owner:
                bad.append(f"event {n}: {owner} completed task {tid} held by {holder} "
                           f"({status})")
            state[tid] = ("completed", owner)
        elif action in ("released", "lease_expired"):
            if status != "in_progress" or holder != owner:
                bad.append(f"event {n}: {owner}'s task {tid} {action} while held by {holder}")
            state[tid] = ("pending", None)
    return state, completions, bad


def check_board(rt, finished: bool = True) -> list[str]:
    """Event log vs final board, exactly-once completion, no orphan, doctor clean."""
    bad: list[str] = []
    snap = rt.board.snapshot()
    state, completions, replay_bad = replay_events(rt.board.events())
    bad += replay_bad
    board = {t.id: t for t in snap.tasks}
    if set(board) != set(state):
        missing = sorted(set(state) ^ set(board))[:10]
        bad.append(f"events.jsonl and the board disagree on which tasks exist: {missing}")
    for tid, task in board.items():
        if task.status == "in_progress":
            bad.append(f"task {tid} is an orphan: in_progress with {task.owner}")
        if finished and task.status != "completed":
            bad.append(f"task {tid} was never completed ({task.status})")
        if task.status == "completed" and completions[tid] != 1:
            bad.append(f"task {tid} completed {completions[tid]} times in events.jsonl")
        replayed = state.get(tid)
        if replayed is not None and replayed != (task.status, task.owner):
            bad.append(f"task {tid}: events replay to {replayed}, the board says "
                       f"{(task.status, task.owner)}")
    bad += [f"doctor: {p.path}: {p.message}" for p in rt.board.doctor()]
    bad += [f"events.jsonl: {p.path}: {p.message}" for p in rt.board.event_problems()]
    return bad


def inbox_lines_from(rt, sender: str) -> Iterator[dict]:
    """Every inbox line sent by `sender`, across all inboxes."""
    for path in sorted(rt.mail.inbox_dir.glob("*.jsonl")):
        if path.name.endswith(".quarantine.jsonl"):
            continue
        for raw in path.read_bytes().splitlines():
            rec = json.loads(raw)
            if rec.get("from") == sender:
                yield rec


def inbox_messages(rt, name: str) -> list:
    """Every message line of `name`'s inbox, parsed (a bad line is a violation elsewhere)."""
    path = rt.mail.inbox_path(name)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return []
    return [parse_line(line, name) for line in raw.splitlines() if line.strip()]


def check_messages(rt, models: dict, sent: list[str], token_re: re.Pattern[str]) -> list[str]:
    """Every token in a teammate's inbox was seen by its model exactly once; all sent arrived."""
    bad: list[str] = []
    delivered: Counter[str] = Counter()
    for name, model in models.items():
        msgs = inbox_messages(rt, name)
        expected: Counter[str] = Counter()
        for m in msgs:
            expected.update(token_re.findall(m.content))
        delivered.update(expected)
        for tok, n in expected.items():
            got = model.seen.get(tok, 0)
            if n != 1 or got != 1:
                bad.append(f"message {tok} to {name}: {n} in the inbox, handed to the model "
                           f"{got} times")
        for tok in set(model.seen) - set(expected):
            bad.append(f"{name}'s model saw {tok}, which is not in its inbox")
        size = rt.mail.inbox_path(name).stat().st_size if msgs else 0
        if rt.mail.cursor(name) != size:
            bad.append(f"{name}'s inbox is acknowledged to {rt.mail.cursor(name)} of {size} "
                       "bytes")
        if rt.mail.quarantined(name):
            bad.append(f"{name}'s inbox has quarantined lines")
    for tok in sent:
        if delivered.get(tok, 0) != 1:
            bad.append(f"message {tok} was sent but is in {delivered.get(tok, 0)} inboxes")
    return bad


def check_lead(rt, lead_seen: Counter[str], cli_owner: str) -> list[str]:
    """Every task a teammate completed was reported to the lead exactly once."""
    bad: list[str] = []
    for task in rt.board.snapshot().tasks:
        if task.status != "completed" or task.owner == cli_owner:
            continue
        n = lead_seen.get(str(task.id), 0)
        if n != 1:
            bad.append(f"the lead saw the result of task {task.id} {n} times")
    return bad


def check_all(rt, models: dict, results: dict, lead_seen: Counter[str],
              token_re: re.Pattern[str], cli_owner: str = "cliworker",
              finished: bool = True) -> list[str]:
    sent = list(results.get("send", {}).get("sent", []))
    sent += [tok for m in models.values() for tok in m.sent]
    bad = check_board(rt, finished)
    bad += check_messages(rt, models, sent, token_re)
    bad += check_lead(rt, lead_seen, cli_owner)
    board = {t.id: t for t in rt.board.snapshot().tasks}
    for tid in results.get("tasks", {}).get("completed", []):
        if tid in board and board[tid].owner != cli_owner:
            bad.append(f"task {tid} completed by the cli but owned by {board[tid].owner}")
    return bad
