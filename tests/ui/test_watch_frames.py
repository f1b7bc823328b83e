"""`agent-cli watch --once`: the plain frame a user (and these tests) read. Columns for
pending (blocked ones say by what), in progress (owner, for how long, lease and worktree when
a task has them), completed (owner, first line of the result); corrupt files as problems;
each teammate's state, tokens and cost; the last events and the lead's unread count."""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest

from agent_cli.board import TaskBoard
from agent_cli.cli import main
from agent_cli.fsutil import utc_now
from agent_cli.team.mailbox import Mailbox
from agent_cli.team.roster import Roster, this_host
from agent_cli.ui import watch_view


def frame(workdir: Path, capsys, *extra: str) -> str:
    assert main(["-C", str(workdir), "watch", "--once", *extra]) == 0
    return capsys.readouterr().out


@pytest.fixture
def board(workdir: Path) -> TaskBoard:
    b = TaskBoard(workdir / ".tasks")
    b.create("lay the base")                       # 1
    b.create("build walls", blocked_by=[1])        # 2 blocked
    b.create("paint", blocked_by=[1, 2])           # 3 blocked
    b.create("draw plans")                         # 4 claimed
    b.create("buy nails")                          # 5 completed
    b.claim(4, "bob")
    token = b.claim(5, "alice").claim_token
    b.complete(5, "alice", token, "bought 200 nails\nreceipt in the drawer")
    return b


def test_the_board_in_three_columns(workdir: Path, board: TaskBoard, capsys) -> None:
    text = frame(workdir, capsys, "--width", "120")
    head = next(line for line in text.splitlines() if line.startswith("pending"))
    assert "pending (3, 2 blocked)" in head and "in progress (1)" in head
    assert "completed (1)" in head
    assert "#2 build walls" in text and "blocked by #1" in text
    assert "blocked by #1, #2" in text
    assert "ready to claim" in text  # #1
    progress = text.index("in progress (1)")
    line = next(li for li in text.splitlines() if "@bob" in li)
    assert line.index("@bob") >= progress - text.rfind("\n", 0, progress) - 1
    assert re.search(r"@bob \d+s", line)  # claimed seconds ago
    assert "@alice: bought 200 nails" in text and "receipt" not in text
    assert text.endswith("\n") and "\x1b[" not in text  # plain: not a terminal


def test_a_corrupt_task_file_is_a_problem_line_not_a_crash(workdir: Path, board: TaskBoard,
                                                           capsys) -> None:
    (workdir / ".tasks" / "task_9.json").write_text("{torn")
    (workdir / ".tasks" / "task_6.json").symlink_to(workdir / ".tasks" / "task_1.json")
    text = frame(workdir, capsys)
    assert "! #9 .tasks/task_9.json: not valid JSON" in text
    assert "! #6 .tasks/task_6.json: a symbolic link, not a regular file" in text
    assert "#1 lay the base" in text  # the rest of the board is still shown


def test_each_teammate_state_tokens_and_cost(workdir: Path, capsys) -> None:
    roster = Roster(workdir / ".team")
    live = {"pid": os.getppid(), "host": this_host()}  # a process that surely runs
    for name in ("alice", "bob", "carol", "dave", "erin", "frank", "gina"):
        roster.add(name, "worker")
    roster.update("alice", status="working", current_task=4, **live, tokens=22_000, spend=[
        {"model": "claude-sonnet-4-5", "tier": "base", "input_tokens": 20_000,
         "output_tokens": 2000}])
    roster.update("bob", status="idle", idle_reason="no claimable task: #3 waits for #2",
                  **live, tokens=500, spend=[{"model": "llama-local", "input_tokens": 500}])
    roster.update("carol", status="waiting_plan", **live)
    roster.update("dave", status="shutdown")
    roster.update("erin", status="failed", idle_reason="model error (auth)")
    roster.update("frank", status="working", current_task=7, pid=2**22 + 17, host=this_host())
    roster.update("gina", status="working", current_task=8, pid=1, host="far-away")
    text = frame(workdir, capsys, "--width", "100")
    rows = {line.split()[0]: line for line in text.splitlines() if line.split()}
    assert "working on #4" in rows["alice"] and "22,000" in rows["alice"]
    assert rows["alice"].rstrip().endswith("$0.09")  # 20000*$3 + 2000*$15 per million
    assert "idle: no claimable task: #3 waits for #2" in rows["bob"]
    assert rows["bob"].split()[-2:] == ["500", "-"]  # an unknown model: tokens, no price
    assert "waiting for plan approval" in rows["carol"]
    assert "shut down" in rows["dave"]
    assert "failed: model error (auth)" in rows["erin"]
    assert f"gone (process {2**22 + 17} ended, was on #7)" in rows["frank"]
    assert "working on #8 (on far-away)" in rows["gina"]  # another host: not checkable
    assert "team default (7)" in text
    assert rows["total"].rstrip().endswith("$0.09 + unpriced")


def test_events_and_the_lead_inbox_in_the_footer(workdir: Path, board: TaskBoard,
                                                 capsys) -> None:
    mail = Mailbox(workdir / ".team")
    mail.send("alice", "lead", "done")
    mail.send("bob", "lead", "question")
    text = frame(workdir, capsys)
    assert "lead inbox: 2 unread" in text
    events = text.split("lead inbox: 2 unread", 1)[1]
    assert "bob claimed #4 draw plans" in events
    assert "alice completed #5" in events
    assert events.index("bob claimed #4") < events.index("alice completed #5")  # oldest first
    delivery = mail.fetch("lead")
    mail.ack("lead", delivery.cursor)
    assert "lead inbox: 0 unread" in frame(workdir, capsys)


def test_an_overflowing_column_shows_the_newest_activity_first(workdir: Path,
                                                               capsys) -> None:
    b = TaskBoard(workdir / ".tasks")
    for i in range(1, 21):
        b.create(f"job {i}")
    b.update(3, add_blocked_by=[20])  # #3 had the latest activity
    text = frame(workdir, capsys, "--width", "80", "--height", "24")
    lines = text.splitlines()
    assert len(lines) <= 24 and max(len(line) for line in lines) <= 80
    assert "pending (20, 1 blocked)" in text
    shown = [line.split()[0] for line in lines if line.startswith("#")]
    assert shown[0] == "#3" and shown[1:3] == ["#20", "#19"]
    hidden = 20 - len(shown)
    assert f"+{hidden} older" in text and "#1 job 1" not in text
    full = [line.split()[0] for line in frame(workdir, capsys).splitlines()
            if line.startswith("#")]
    assert full == [f"#{i}" for i in range(1, 21)]  # without a height: every task, by id


def test_an_empty_workdir_is_a_frame_too(workdir: Path, capsys) -> None:
    text = frame(workdir, capsys)
    assert "pending (0)" in text and "no teammates yet" in text and "no board events yet" in text
    assert not (workdir / ".tasks").exists() and not (workdir / ".team").exists()


def test_lease_and_worktree_are_shown_when_a_task_has_them() -> None:
    now = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    task = SimpleNamespace(
        id=4, subject="s", owner="bob", updated_at="", claimed_at="2026-03-01T11:57:00.000Z",
        lease_expires_at=(now + timedelta(seconds=90)).isoformat(),
        worktree={"path": "/w/.agent-cli/worktrees/task-4", "branch": "task-4"},
    )
    assert watch_view.progress_entry(task, now).detail.plain == "@bob 3m lease 1m left wt task-4"
    task.lease_expires_at = "2026-03-01T11:59:30.000Z"
    assert "lease expired 30s ago" in watch_view.progress_entry(task, now).detail.plain
    del task.lease_expires_at, task.worktree  # a board from before leases: no error
    assert watch_view.progress_entry(task, now).detail.plain == "@bob 3m"


def test_the_clock_only_asks_for_a_redraw_when_a_shown_duration_changes() -> None:
    state = SimpleNamespace(board=SimpleNamespace(tasks=[SimpleNamespace(
        id=1, subject="s", owner="bob", status="in_progress", updated_at="",
        claimed_at="2026-03-01T11:50:00.000Z")]))
    at = datetime(2026, 3, 1, 12, 0, 10, tzinfo=UTC)
    later = at + timedelta(seconds=30)
    working = watch_view.in_progress(state)
    assert watch_view.clock_key(working, at) == watch_view.clock_key(working, later)
    assert watch_view.clock_key(working, at) != watch_view.clock_key(working, at + timedelta(
        seconds=60))
    assert utc_now()  # the on-disk time format parses
    assert watch_view.parse_time(utc_now()) is not None


def test_the_lead_row_shows_what_the_session_spent(workdir: Path, capsys) -> None:
    import io
    import json
    from argparse import Namespace

    from support.team import make_runtime

    from agent_cli.models.base import Usage
    from agent_cli.models.scripted import Reply, ScriptedModel
    from agent_cli.ui.headless import run_headless

    model = ScriptedModel({"lead": [Reply("ok", usage=Usage(input_tokens=4000,
                                                            output_tokens=400))]},
                          name="claude-opus-4-5")
    rt = make_runtime(workdir, model)
    args = Namespace(prompt="go", wait=False, timeout=30, output_format="json")
    assert run_headless(rt, args, io.StringIO(), io.StringIO()) == 0
    saved = json.loads((workdir / ".team" / "lead_usage.json").read_text())
    assert saved["pid"] == os.getpid() and saved["spend"][0]["model"] == "claude-opus-4-5"
    text = frame(workdir, capsys)
    lead = next(line for line in text.splitlines() if line.startswith("lead "))
    assert lead.split()[-2:] == ["4,400", "$0.03"]  # 4000*$5 + 400*$25 per million
    assert next(line for line in text.splitlines() if line.startswith("total")).split()[-2:] \
        == ["4,400", "$0.03"]
    (workdir / ".team" / "lead_usage.json").write_text("{not json")
    assert "lead " not in frame(workdir, capsys).split("team default")[1].split("events")[0]


@pytest.mark.parametrize("height", [16, 24, 40])
@pytest.mark.parametrize("team,events", [(True, True), (False, True), (True, False)])
def test_a_busy_board_fits_the_terminal(workdir: Path, height: int, team: bool,
                                        events: bool) -> None:
    import io

    from agent_cli.pricing import PriceTable
    from agent_cli.ui.style import make_console
    from agent_cli.ui.watch_data import WatchSource

    b = TaskBoard(workdir / ".tasks")
    for i in range(1, 31):
        b.create(f"job {i}", blocked_by=[i - 1] if i % 2 == 0 else [])
    for i in (1, 3, 5):
        b.claim(i, f"w{i}")
    roster = Roster(workdir / ".team")
    for i in range(12):
        roster.add(f"mate{i}", "worker")
    (workdir / ".tasks" / "task_99.json").write_text("{")
    source = WatchSource(workdir)
    source.poll()
    out = io.StringIO()
    console = make_console(out, 80, False)
    console.print(watch_view.frame(source.state, str(workdir), PriceTable.load(), height,
                                   watch_view.Panes(team, events), live=True))
    lines = out.getvalue().splitlines()
    assert len(lines) < height  # one spare line: the live view never scrolls
    assert all(len(line) <= 80 for line in lines)
    text = out.getvalue()
    assert "in progress (3)" in text and ("team default (12)" in text) == team
    assert ("lead inbox" in text) == events
    if team:
        assert "more" in text  # the teammates that do not fit are counted, not dropped


def test_a_routed_task_says_who_may_take_it(workdir: Path, capsys) -> None:
    b = TaskBoard(workdir / ".tasks")
    b.create("write the docs", assignee="writer", require_plan=True)
    b.create("test it", blocked_by=[1], role="tester")
    text = frame(workdir, capsys, "--width", "150")
    assert "ready to claim for @writer +plan" in text
    assert "blocked by #1 for role tester" in text
