"""A read-only or full `.tasks/`: one clear line (StorageError, exit 5), nothing half-written,
and the runtime and its teammates carry on once the disk is back.

Tests run as root in CI, where chmod stops nothing, so the disk faults are made two ways:
`os.replace`/`os.open` raising ENOSPC/EROFS for paths under `.tasks/` (always), and a real
tiny tmpfs mounted on `.tasks/` and remounted read-only (only where mount is permitted).
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import subprocess
from pathlib import Path

import pytest
from support.disk_faults import DiskFault, board_files
from support.team import (
    WAIT,
    Call,
    Recorder,
    Reply,
    claimed_in,
    complete_claimed,
    make_runtime,
)

from agent_cli import cli
from agent_cli.board.store import TaskBoard
from agent_cli.errors import StorageError
from agent_cli.models.scripted import ScriptedModel


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(list(argv))
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS])
def test_cli_write_on_a_failing_disk_is_one_line_exit_5_and_changes_nothing(
    workdir, monkeypatch, code
):
    board = TaskBoard(workdir / ".tasks")
    board.create("first")
    before = board_files(workdir / ".tasks")
    fault = DiskFault(monkeypatch, workdir / ".tasks", code)
    fault.on.set()

    for argv in (["tasks", "add", "second"], ["tasks", "claim", "--as", "alice"]):
        status, out, err = run_cli("-C", str(workdir), *argv)
        assert status == 5, (argv, out, err)
        assert err.count("\n") == 1 and err.startswith("agent-cli: cannot ")
        assert os.strerror(code) in err and "Traceback" not in err
    fault.on.clear()

    after = board_files(workdir / ".tasks")
    del before[".stamp"], after[".stamp"]
    after.pop(".next_id", None), before.pop(".next_id", None)  # an id may be skipped
    assert after == before  # no temp file left, no task changed
    assert run_cli("-C", str(workdir), "tasks", "doctor")[0] == 0
    status, out, _ = run_cli("-C", str(workdir), "tasks", "claim", "--as", "alice")
    assert status == 0 and "#1 claimed by alice" in out


def test_a_full_disk_is_an_error_result_for_the_teammate_which_then_finishes(
    workdir, monkeypatch
):
    fault = DiskFault(monkeypatch, workdir / ".tasks", errno.ENOSPC)
    seen = {}

    def complete_while_full(request):
        seen["task"] = claimed_in(request)
        fault.on.set()
        task_id, token = seen["task"]
        return Reply(tool_calls=[Call("complete_task", {
            "task_id": task_id, "claim_token": token, "result": "first try"})])

    def retry_when_space_is_back(request):
        result = request.messages[-1].content[0]
        seen["error"] = (result.is_error, result.content)
        fault.on.clear()
        task_id, token = seen["task"]
        return Reply(tool_calls=[Call("complete_task", {
            "task_id": task_id, "claim_token": token, "result": "second try"})])

    model = ScriptedModel({"alice": [complete_while_full, retry_when_space_is_back,
                                     Reply("done")]})
    rt = make_runtime(workdir, model)
    rec = Recorder(rt)
    try:
        task = rt.board.create("write the report")
        rt.team.spawn("alice", "writer")
        rec.wait_event("TaskEvent", action="completed", task_id=task.id)
        assert rt.team.wait_quiet(WAIT)
    finally:
        assert rt.close(timeout=WAIT) == []
    is_error, text = seen["error"]
    assert is_error and "No space left on device" in text and "\n" not in text.strip()
    done = rt.board.get(task.id)
    assert (done.status, done.owner, done.result) == ("completed", "alice", "second try")
    assert not rec.of("StatusEvent", agent="alice", status="failed")
    assert rt.board.doctor() == []


def test_a_teammate_that_cannot_claim_on_a_full_disk_waits_instead_of_failing(
    workdir, monkeypatch
):
    fault = DiskFault(monkeypatch, workdir / ".tasks", errno.ENOSPC)
    model = ScriptedModel({"alice": [complete_claimed(), Reply("done")] * 2})
    rt = make_runtime(workdir, model)
    rec = Recorder(rt)
    try:
        first = rt.board.create("one")
        fault.on.set()
        rt.team.spawn("alice", "worker")
        rec.wait_for(lambda: any(e.kind == "StatusEvent" and e.agent == "alice"
                                 and "No space left" in e.reason for e in rec.events),
                     what="alice idle because the disk is full")
        assert rt.team.teammate("alice").alive()
        assert rt.board.get(first.id).status == "pending"
        fault.on.clear()
        second = rt.board.create("two")  # the board changes: alice looks again
        rec.wait_event("TaskEvent", action="completed", task_id=first.id)
        rec.wait_event("TaskEvent", action="completed", task_id=second.id)
        assert rt.team.wait_quiet(WAIT)
    finally:
        assert rt.close(timeout=WAIT) == []
    assert not rec.of("StatusEvent", agent="alice", status="failed")


# ----- a real tmpfs, when this machine lets us mount one --------------------------------------
def _mount(target: Path, *options: str) -> bool:
    try:
        done = subprocess.run(["mount", *options, str(target)], capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


@pytest.fixture
def tiny_tasks_mount(workdir):
    tasks_dir = workdir / ".tasks"
    tasks_dir.mkdir()
    if os.geteuid() != 0 or not _mount(tasks_dir, "-t", "tmpfs", "-o", "size=128k", "tmpfs"):
        pytest.skip("cannot mount a tmpfs here")
    yield tasks_dir
    subprocess.run(["umount", "-l", str(tasks_dir)], capture_output=True, timeout=10)


def test_real_read_only_and_full_tasks_dir(tiny_tasks_mount):
    tasks_dir = tiny_tasks_mount
    workdir = str(tasks_dir.parent)
    board = TaskBoard(tasks_dir)
    board.create("kept")
    assert _mount(tasks_dir, "-o", "remount,ro")
    try:
        status, _, err = run_cli("-C", workdir, "tasks", "add", "refused")
        assert status == 5 and err.count("\n") == 1 and "Read-only file system" in err
        status, out, _ = run_cli("-C", workdir, "tasks", "list")  # reading still works
        assert status == 0 and "kept" in out
    finally:
        assert _mount(tasks_dir, "-o", "remount,rw")
    with pytest.raises(StorageError, match="No space left on device"):
        for i in range(10_000):
            board.create(f"filler {i}", description="x" * 4000)
    assert not [p for p in tasks_dir.iterdir() if p.name.endswith(".tmp")]
    assert board.doctor() == []
    assert run_cli("-C", workdir, "tasks", "doctor")[0] == 0
    assert board.get(1).subject == "kept"
