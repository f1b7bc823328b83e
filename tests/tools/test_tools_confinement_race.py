"""The symlink swap race against the file tools: while a thread keeps exchanging a directory
(or a file) of the workdir with a symlink to a directory outside, thousands of write_file,
edit_file, read_file and grep calls run. Not one write lands outside, not one byte of the
outside file is read, and the outside tree is unchanged byte for byte.

The swapper uses renameat2(RENAME_EXCHANGE), an atomic exchange: the strongest swapper
there is, as fast as the kernel allows (ctypes releases the GIL around the call). With the
path-checking code this replaced, the same harness let writes through (measured 1-7 of
5,000 on a 2-core machine; the issue measured 493 of 5,000 with its own swapper).
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
from pathlib import Path

import pytest

from agent_cli.tools.base import ToolContext
from agent_cli.tools.workspace import workspace_tools

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="renameat2(RENAME_EXCHANGE) is Linux only")
AT_FDCWD, RENAME_EXCHANGE = -100, 2
CALLS = 5000
SECRET = b"top secret: never read, never written\n"


class Swapper:
    """A thread exchanging path `a` with path `b` as fast as it can, until stopped."""

    def __init__(self, a: Path, b: Path) -> None:
        self._libc = ctypes.CDLL(None, use_errno=True)
        self._a, self._b = os.fsencode(a), os.fsencode(b)
        self._stop = threading.Event()
        self.swaps = 0
        if self._libc.renameat2(AT_FDCWD, self._a, AT_FDCWD, self._b, RENAME_EXCHANGE):
            pytest.skip(f"renameat2 unsupported here (errno {ctypes.get_errno()})")
        self._thread = threading.Thread(target=self._run, name="swapper", daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self._libc.renameat2(AT_FDCWD, self._a, AT_FDCWD, self._b, RENAME_EXCHANGE)
            self.swaps += 1

    def __enter__(self) -> Swapper:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.is_symlink()}


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "fsync", lambda fd: None)  # speed only: fsync is no part of it
    work, outside = tmp_path / "work", tmp_path / "outside"
    work.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_bytes(SECRET)
    (work / "d").mkdir()
    (work / "d" / "secret.txt").write_text("inside copy\n")
    (work / "swap").symlink_to(outside)
    tools = {t.name: t for t in workspace_tools()}
    return tools, ToolContext(agent="mallory", workdir=work), work, outside


def call(tools, ctx, name, **raw):
    tool = tools[name]
    return tool.run(tool.parse(raw), ctx)


def test_no_write_lands_outside_while_a_directory_is_swapped_for_a_symlink(env):
    tools, ctx, work, outside = env
    before = snapshot(outside)
    landed = 0
    with Swapper(work / "d", work / "swap") as swapper:
        for i in range(CALLS):
            out = call(tools, ctx, "write_file", path=f"d/f{i}.txt", content="x")
            landed += not out.is_error
    assert swapper.swaps > 1000, "the swapper must actually have raced the writes"
    assert snapshot(outside) == before, "a write landed outside the workdir"
    assert landed > 0, "some writes went through while the directory was real"
    inside = {p.name for p in work.rglob("f*.txt")}
    assert len(inside) == landed  # every write that said so is inside, under d/ or swap/


def test_edits_and_reads_never_touch_the_outside_file_under_the_swap(env):
    tools, ctx, work, outside = env
    before = snapshot(outside)
    with Swapper(work / "d", work / "swap"):
        for _ in range(CALLS // 5):
            read = call(tools, ctx, "read_file", path="d/secret.txt")
            assert "top secret" not in read.content
            grep = call(tools, ctx, "grep", pattern="secret", path="d")
            assert "top secret" not in grep.content
            call(tools, ctx, "edit_file", path="d/secret.txt", old_string="inside",
                 new_string="inside")  # refused (same text): only the read path runs
            call(tools, ctx, "edit_file", path="d/secret.txt", old_string="top secret",
                 new_string="pwned")
    assert snapshot(outside) == before


def test_a_file_swapped_for_a_symlink_is_never_written_through(env):
    tools, ctx, work, outside = env
    target = work / "notes.txt"
    target.write_text("mine\n")
    (work / "notes_link").symlink_to(outside / "secret.txt")
    before = snapshot(outside)
    with Swapper(target, work / "notes_link"):
        for i in range(CALLS // 5):
            call(tools, ctx, "write_file", path="notes.txt", content=f"v{i}\n")
            out = call(tools, ctx, "read_file", path="notes.txt")
            assert "top secret" not in out.content
    assert snapshot(outside) == before
