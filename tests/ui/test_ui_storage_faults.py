"""Issue 7 in the REPL: a read-only or full `.tasks/` is one clear error line, nothing is
half-written, and the REPL keeps going (other commands work, Ctrl-D exits 0)."""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

import pytest
from support.disk_faults import DiskFault, board_files
from support.repl_harness import Harness, make_runtime

from agent_cli.models.scripted import Call, Reply


@pytest.fixture
def short_workdir():
    """A short path: the tool line keeps the first 100 characters of an error (agent's
    ToolFinished.outcome), and pytest's tmp paths alone are longer than that."""
    with tempfile.TemporaryDirectory(prefix="ui-disk-") as d:
        yield Path(d)


def lines_with(text: str, needle: str) -> list[str]:
    return [line for line in text.splitlines() if needle in line]


@pytest.mark.parametrize("code", [errno.EROFS, errno.ENOSPC], ids=["read-only", "full"])
def test_a_failing_tasks_dir_is_one_line_and_the_repl_goes_on(
    short_workdir: Path, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    workdir = short_workdir
    script = {"lead": [
        Reply("Adding it.", tool_calls=[Call("create_task", {"subject": "second"})]),
        Reply("The board could not be written."),
        Reply("Still here."),
    ]}
    rt, model = make_runtime(workdir, script)
    rt.board.create("first")
    tasks_dir = workdir / ".tasks"
    before = board_files(tasks_dir)
    fault = DiskFault(monkeypatch, tasks_dir, code)
    fault.on.set()
    h = Harness(rt).start()
    try:
        out = h.command("add a task called second", "The board could not be written.")
        reason = os.strerror(code)
        (shown,) = lines_with(out, reason)  # the one line that says what went wrong
        assert shown.startswith("lead     create_task(") and "✗" in shown
        assert "Traceback" not in h.screen.text
        # the model got it as an error result, not an exception that ended the turn
        result = model.requests[1].messages[-1].content[0]
        assert result.is_error and reason in str(result.content)

        out = h.command("/tasks", "Tasks")
        assert "first" in out and "second" not in out
        out = h.command("/tasks 2", "error:")
        assert "no task 2" in out
        h.command("/team", "Team")
        h.command("still there?", "Still here.")
    finally:
        h.quit()
    assert h.exit_code == 0
    fault.on.clear()
    after = board_files(tasks_dir)
    for name in (".stamp", ".next_id"):  # bookkeeping: an id may be skipped
        before.pop(name, None), after.pop(name, None)
    assert after == before  # no task file, no temp file, no log line from the failed write
    assert rt.board.doctor() == []
    assert [t.subject for t in rt.board.snapshot().tasks] == ["first"]
