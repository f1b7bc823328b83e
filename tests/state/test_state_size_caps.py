"""Size caps: a 100 MB task file, config.json, settings.json and history, a 50 MB inbox line,
a 100 MB file for read_file and grep. Each is reported by name (over its cap), the good
state next to it keeps working, and memory stays bounded: the peak RSS of a process doing
all of it is measured (resource.getrusage of the child) against the same process on small
files, and must not grow by anything like the size of the files.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

BIG = 100 << 20
LINE = 50 << 20
SLACK_KB = 40 << 10  # far below any of the files: reading one whole would exceed it

DRIVER = r"""
import contextlib, io, json, sys
from agent_cli import cli
from agent_cli.tools.base import ToolContext
from agent_cli.tools.workspace import workspace_tools
wd = sys.argv[1]
outs = {}
for argv in (["tasks", "list"], ["tasks", "doctor"], ["team"], ["inbox", "alice"]):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
        code = cli.main(["-C", wd, *argv])
    outs[" ".join(argv)] = [code, buf.getvalue()]
tools = {t.name: t for t in workspace_tools()}
ctx = ToolContext(agent="a", workdir=wd)
for name, raw in (("read_file", {"path": "big.txt"}), ("grep", {"pattern": "x", "path": "."}),
                  ("edit_file", {"path": "big.txt", "old_string": "a", "new_string": "b"})):
    out = tools[name].run(tools[name].parse(raw), ctx)
    outs[name] = [out.is_error, out.content]
print(json.dumps(outs))
"""


def sparse(path: Path, size: int, tail: bytes = b"") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        fh.truncate(size)
        fh.seek(size)
        fh.write(tail)


def make_state(wd: Path, big: bool) -> None:
    from agent_cli.board.store import TaskBoard
    from agent_cli.team.mailbox import Mailbox

    board = TaskBoard(wd / ".tasks")
    board.create("good")
    mail = Mailbox(wd / ".team")
    size = BIG if big else 10
    sparse(wd / ".tasks" / "task_2.json", size)
    sparse(wd / ".team" / "config.json", size)
    sparse(wd / ".agent-cli" / "history", size)
    sparse(wd / "big.txt", size)
    good = mail._build("bob", "alice", "after the big line", "message", None, None, None)
    sparse(mail.inbox_path("alice"), LINE if big else 10, b"\n" + good.to_line().encode() + b"\n")


def peak_kb(wd: Path) -> tuple[int, dict]:
    """Run the driver in a child; its peak RSS (KB) comes from RUSAGE_CHILDREN of a wrapper."""
    wrapper = ("import resource, subprocess, sys; p = subprocess.run(sys.argv[1:], "
               "capture_output=True, text=True, timeout=120); sys.stderr.write(p.stderr); "
               "print(p.stdout.strip().splitlines()[-1]); "
               "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    proc = subprocess.run([sys.executable, "-c", wrapper, sys.executable, "-c", DRIVER,
                           str(wd)], capture_output=True, text=True, timeout=180,
                          cwd=wd.parent)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.strip().splitlines()
    return int(lines[-1]), json.loads(lines[-2])


def test_state_files_and_reads_over_their_caps_are_named_and_memory_stays_bounded(tmp_path):
    small, big = tmp_path / "small" / "work", tmp_path / "big" / "work"
    small.mkdir(parents=True)
    big.mkdir(parents=True)
    make_state(small, big=False)
    make_state(big, big=True)
    base_kb, _ = peak_kb(small)
    used_kb, outs = peak_kb(big)
    assert used_kb - base_kb < SLACK_KB, f"peak RSS grew by {(used_kb - base_kb) >> 10} MB"

    code, out = outs["tasks doctor"]
    assert "task_2.json" in out and "cap" in out and "Traceback" not in out
    code, out = outs["tasks list"]
    assert code == 0 and "good" in out
    code, out = outs["team"]
    assert "config.json" in out and "cap" in out
    code, out = outs["inbox alice"]
    assert code == 0 and "after the big line" in out  # the message after the big line
    assert "line cap" in out  # the big line is reported, by byte offset
    for name in ("read_file", "edit_file"):
        is_error, content = outs[name]
        assert is_error and "big.txt" in content and "cap" in content
    assert os.path.getsize(big / "big.txt") == BIG  # nothing was rewritten
