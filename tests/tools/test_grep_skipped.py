"""grep names every file it did not search because of its per-file size cap, with matches
or without: "no matches" never hides a file that was never read."""

from __future__ import annotations

from agent_cli.tools.base import ToolContext
from agent_cli.tools.workspace import GREP_MAX_FILE_BYTES, workspace_tools

GREP = next(t for t in workspace_tools() if t.name == "grep")


def grep(workdir, **raw) -> str:
    out = GREP.run(GREP.parse(raw), ToolContext(agent="alice", workdir=workdir))
    assert not out.is_error, out.content
    return out.content


def test_a_file_over_the_cap_is_named_when_nothing_matched(workdir) -> None:
    (workdir / "big.log").write_bytes(b"secret\n" * (GREP_MAX_FILE_BYTES // 7 + 1))
    (workdir / "small.txt").write_text("nothing here\n")
    out = grep(workdir, pattern="secret")
    assert out.splitlines() == ["no matches for secret",
                                "not searched (over the 5 MB per-file cap): big.log"]


def test_skipped_files_are_listed_after_the_matches(workdir) -> None:
    (workdir / "sub").mkdir()
    for name in ("a.log", "sub/b.log"):
        (workdir / name).write_bytes(b"x" * (GREP_MAX_FILE_BYTES + 1))
    (workdir / "hit.txt").write_text("needle\n")
    out = grep(workdir, pattern="needle")
    assert out.splitlines() == ["hit.txt:1: needle",
                                "not searched (over the 5 MB per-file cap): a.log, sub/b.log"]
