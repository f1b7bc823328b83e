"""The shell tool: exit codes, merged output, the cap, timeout and cancel killing the group."""

from __future__ import annotations

import os
import select
import threading
from pathlib import Path

import pytest

from agent_cli.errors import ToolError
from agent_cli.tools.base import ToolContext, ToolOutput
from agent_cli.tools.shell import OUTPUT_CAP, CappedOutput, run_process, shell_tool

WAIT = 15.0


@pytest.fixture
def ctx(workdir):
    return ToolContext(agent="alice", workdir=workdir)


def run(ctx: ToolContext, **raw) -> ToolOutput:
    tool = shell_tool()
    return tool.run(tool.parse(raw), ctx)


def dies(pid: int, timeout: float = WAIT) -> bool:
    """Wait (on a pidfd, no sleeping) until `pid` has exited; False if it is still running."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        ready, _, _ = select.select([fd], [], [], timeout)
        return bool(ready)
    finally:
        os.close(fd)


def wait_for_line(fifo: Path, timeout: float = WAIT) -> str:
    """Block (without sleeping) until the command writes a line into the FIFO."""
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        data = b""
        while not data.endswith(b"\n"):
            ready, _, _ = select.select([fd], [], [], timeout)
            assert ready, "the command never reported in"
            data += os.read(fd, 100)
        return data.decode().strip()
    finally:
        os.close(fd)


def test_runs_in_the_workdir_and_reports_exit_0(ctx, workdir):
    out = run(ctx, command="pwd; cat")  # stdin is empty: cat does not hang
    assert not out.is_error
    assert out.content == f"{workdir}\n[exit 0]"


def test_non_zero_exit_is_an_error_result_with_merged_output(ctx):
    out = run(ctx, command="echo to-out; echo to-err >&2; exit 3")
    assert out.is_error
    assert out.content == "to-out\nto-err\n[exit 3]"
    assert run(ctx, command="true").content == "(no output)\n[exit 0]"


def test_output_is_capped_and_the_cap_is_stated(ctx):
    out = run(ctx, command="head -c 100000 /dev/zero | tr '\\0' x; echo; echo THE-END")
    assert f"output is capped at {OUTPUT_CAP} characters" in out.content
    assert len(out.content) < OUTPUT_CAP + 300
    assert out.content.startswith("xxx") and "THE-END\n[exit 0]" in out.content


def test_capped_output_keeps_head_and_tail_across_utf8_chunks():
    buf = CappedOutput(cap=10, head=6)
    data = ("é" * 20).encode()
    for i in range(0, len(data), 3):  # split inside multi-byte characters
        buf.feed(data[i : i + 3])
    buf.feed(b"", final=True)
    text = buf.text()
    assert text.startswith("é" * 6) and text.endswith("é" * 4) and "10 characters omitted" in text


def test_timeout_kills_the_whole_process_group(ctx, workdir):
    out = run(ctx, command="sleep 60 & echo $! > bg.pid; sleep 60", timeout_s=0.5)
    assert out.is_error
    assert "timed out after 0.5s" in out.content and "process group was killed" in out.content
    assert dies(int((workdir / "bg.pid").read_text()))


def test_cancel_from_another_thread_kills_the_command(ctx, workdir):
    fifo = workdir / "ready.fifo"
    os.mkfifo(fifo)
    results: list[ToolOutput] = []
    worker = threading.Thread(
        target=lambda: results.append(
            run(ctx, command="sleep 60 & echo $! > ready.fifo; sleep 60", timeout_s=600)
        )
    )
    worker.start()
    bg_pid = int(wait_for_line(fifo))
    ctx.cancel.set()
    worker.join(WAIT)
    assert not worker.is_alive()
    assert results[0].is_error and "interrupted by the user" in results[0].content
    assert dies(bg_pid)


def test_background_jobs_left_behind_are_stopped(ctx, workdir):
    out = run(ctx, command="sleep 60 & echo $! > bg.pid; echo started")
    assert "started" in out.content and "background processes were stopped" in out.content
    assert dies(int((workdir / "bg.pid").read_text()))


@pytest.mark.parametrize(
    "raw", [{"command": "ls", "timeout_s": 601}, {"command": "ls", "timeout_s": 0}]
)
def test_timeout_is_bounded(raw):
    with pytest.raises(ToolError, match="timeout_s"):
        shell_tool().parse(raw)


def test_empty_and_nul_commands_are_refused(ctx):
    assert run(ctx, command="  ").content == "command is empty"
    assert "NUL" in run(ctx, command="ls\x00").content


def test_run_process_keeps_stderr_apart_only_when_asked(workdir):
    never = threading.Event()
    merged = run_process("echo out; echo err >&2", workdir, 10, never)
    assert merged.output == "out\nerr\n" and merged.stderr == ""
    split = run_process("echo out; echo err >&2", workdir, 10, never, separate_stderr=True)
    assert (split.output, split.stderr, split.code) == ("out\n", "err\n", 0)
