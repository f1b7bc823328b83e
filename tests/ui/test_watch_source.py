"""WatchSource, the data behind `agent-cli watch`: an unchanged workdir costs no board read;
a change by another process is seen on the next poll (and the board re-read only for the
tasks its stamp names); odd files (a FIFO, a symlink, a torn line) never hang or crash it;
it writes nothing."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from agent_cli.board import TaskBoard
from agent_cli.board.cache import TaskCache
from agent_cli.team.mailbox import Mailbox
from agent_cli.team.roster import Roster
from agent_cli.ui.watch_data import WatchSource


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def counting_rereads(monkeypatch) -> list[str]:
    seen: list[str] = []
    real = TaskCache._reread

    def reread(self, name: str, *dir_fd: int) -> None:
        seen.append(name)
        real(self, name, *dir_fd)

    monkeypatch.setattr(TaskCache, "_reread", reread)
    return seen


def snapshot_calls(monkeypatch) -> list[int]:
    calls: list[int] = []
    real = TaskBoard.snapshot

    def snap(self):
        calls.append(1)
        return real(self)

    monkeypatch.setattr(TaskBoard, "snapshot", snap)
    return calls


def test_nothing_changed_means_no_board_read(workdir: Path, monkeypatch) -> None:
    board = TaskBoard(workdir / ".tasks")
    for i in range(50):
        board.create(f"task {i}")
    clock = Clock()
    source = WatchSource(workdir, clock)
    assert source.poll()
    calls = snapshot_calls(monkeypatch)
    for _ in range(20):
        clock.now += 0.1
        assert not source.poll()
    assert calls == []  # 2 s of polls: stamp and stats only
    clock.now += 30.0
    source.poll()
    assert calls == [1]  # the periodic look for hand edits


def test_another_process_write_is_seen_by_re_reading_only_that_task(workdir: Path,
                                                                    monkeypatch) -> None:
    from agent_cli.board import cache

    monkeypatch.setattr(cache, "FULL_RESCAN_NS", 10**15)  # a slow machine: no periodic rescan
    board = TaskBoard(workdir / ".tasks")
    for i in range(30):
        board.create(f"task {i}")
    source = WatchSource(workdir, Clock())
    source.poll()
    rereads = counting_rereads(monkeypatch)
    before = source.state.version
    subprocess.run([sys.executable, "-m", "agent_cli", "-C", str(workdir), "tasks", "claim",
                    "7", "--as", "alice"], check=True, capture_output=True, timeout=60)
    assert source.poll() and source.state.version == before + 1
    assert rereads == ["task_7.json"]
    task = source.state.board.by_id()[7]
    assert task.owner == "alice" and task.status == "in_progress"
    assert source.state.events[-1]["action"] == "claimed"


def test_team_and_inbox_changes_are_seen(workdir: Path) -> None:
    source = WatchSource(workdir, Clock())
    source.poll()
    Roster(workdir / ".team").add("alice", "tester")
    assert source.poll() and [m.name for m in source.state.members] == ["alice"]
    mail = Mailbox(workdir / ".team")
    mail.send("alice", "lead", "one")
    assert source.poll() and source.state.lead_unread == 1
    mail.ack("lead", mail.fetch("lead").cursor)
    assert source.poll() and source.state.lead_unread == 0


def test_a_fifo_or_symlink_in_place_of_a_log_neither_hangs_nor_is_followed(workdir: Path
                                                                          ) -> None:
    tasks, inbox = workdir / ".tasks", workdir / ".team" / "inbox"
    tasks.mkdir()
    inbox.mkdir(parents=True)
    os.mkfifo(tasks / "events.jsonl")
    secret = workdir / "secret.jsonl"
    secret.write_text('{"id":"x","type":"message","from":"a","to":"lead","content":"s"}\n')
    (inbox / "lead.jsonl").symlink_to(secret)
    (inbox / "lead.cursor").write_text("not json")
    done = threading.Event()
    result = {}

    def run() -> None:
        source = WatchSource(workdir, Clock())
        source.poll()
        result["state"] = source.state
        done.set()

    threading.Thread(target=run, daemon=True).start()
    assert done.wait(10), "polling blocked on a FIFO"
    assert result["state"].events == [] and result["state"].lead_unread == 0


def test_a_torn_last_event_line_is_skipped(workdir: Path) -> None:
    board = TaskBoard(workdir / ".tasks")
    board.create("one")
    with open(workdir / ".tasks" / "events.jsonl", "a") as fh:
        fh.write('{"action": "claimed", "task_id"')  # a writer mid-line
    source = WatchSource(workdir, Clock())
    source.poll()
    assert [e["action"] for e in source.state.events] == ["created"]


def test_watching_writes_nothing(workdir: Path) -> None:
    board = TaskBoard(workdir / ".tasks")
    board.create("one")
    Roster(workdir / ".team").add("alice", "tester")
    Mailbox(workdir / ".team").send("alice", "lead", "hello")
    (workdir / ".team" / "config.json").write_text("{broken")
    before = {p: p.stat().st_mtime_ns for p in workdir.rglob("*") if p.is_file()}
    source = WatchSource(workdir, Clock())
    source.poll()
    assert "config.json" in source.state.team_problem
    after = {p: p.stat().st_mtime_ns for p in workdir.rglob("*") if p.is_file()}
    assert after == before  # nothing set aside, acknowledged or rewritten
