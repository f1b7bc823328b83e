"""read_file, write_file, edit_file, glob, grep as a model would use them."""

from __future__ import annotations

import os
import stat

import pytest

from agent_cli.tools.base import ToolContext
from agent_cli.tools.workspace import workspace_tools


@pytest.fixture
def run(workdir):
    tools = {t.name: t for t in workspace_tools()}
    ctx = ToolContext(agent="alice", workdir=workdir)

    def call(name, **raw):
        tool = tools[name]
        try:
            args = tool.parse(raw)
        except Exception as exc:  # invalid input is a ToolError -> an error result
            from agent_cli.tools.base import ToolOutput

            return ToolOutput(str(exc), is_error=True)
        return tool.run(args, ctx)

    return call


def test_the_six_tools_and_their_flags():
    tools = {t.name: t for t in workspace_tools()}
    assert list(tools) == ["read_file", "write_file", "edit_file", "glob", "grep", "shell"]
    assert [n for n, t in tools.items() if t.read_only] == ["read_file", "glob", "grep"]
    assert {n: t.permission for n, t in tools.items() if t.permission} == {
        "read_file": "Read",
        "write_file": "Write",
        "edit_file": "Edit",
        "glob": "Read",
        "grep": "Read",
        "shell": "Bash",
    }
    for t in tools.values():
        assert t.spec().input_schema["type"] == "object"


def test_read_file_numbers_lines_and_pages(run, workdir):
    (workdir / "a.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    out = run("read_file", path="a.txt")
    assert out.content.splitlines()[0] == "     1\tline 1"
    assert "line 10" in out.content and "offset=" not in out.content
    page = run("read_file", path="a.txt", offset=4, limit=3).content.splitlines()
    assert page[:3] == ["     4\tline 4", "     5\tline 5", "     6\tline 6"]
    assert page[3] == "(lines 4-6 of 10; use offset=7 to read more)"
    assert "past the end" in run("read_file", path="a.txt", offset=11).content


def test_read_file_errors_are_clear(run, workdir):
    (workdir / "bin").write_bytes(b"\x00\x01\x02")
    (workdir / "d").mkdir()
    assert run("read_file", path="missing.txt").content == "no such file: missing.txt"
    assert "binary" in run("read_file", path="bin").content
    assert "is a directory" in run("read_file", path="d").content
    bad = run("read_file", path="a", limit=0)
    assert bad.is_error and "limit" in bad.content


def test_write_file_creates_parent_directories_and_keeps_the_mode(run, workdir):
    out = run("write_file", path="src/pkg/mod.py", content="x = 1\n")
    assert out.content == "Created src/pkg/mod.py (1 lines, 6 bytes)"
    assert (workdir / "src/pkg/mod.py").read_text() == "x = 1\n"
    script = workdir / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    assert run("write_file", path="run.sh", content="#!/bin/sh\necho hi\n").content.startswith(
        "Overwrote"
    )
    assert stat.S_IMODE(os.stat(script).st_mode) == 0o755
    assert [p.name for p in workdir.iterdir() if p.name.endswith(".tmp")] == []


def test_edit_file_exact_replacement(run, workdir):
    f = workdir / "a.py"
    f.write_bytes(b"a = 1\r\nb = 2\r\na = 1\r\n")
    zero = run("edit_file", path="a.py", old_string="c = 3", new_string="c = 4")
    assert zero.is_error and "not found" in zero.content
    several = run("edit_file", path="a.py", old_string="a = 1", new_string="a = 9")
    assert several.is_error and "occurs 2 times" in several.content
    assert f.read_bytes() == b"a = 1\r\nb = 2\r\na = 1\r\n"  # refused edits change nothing
    one = run("edit_file", path="a.py", old_string="b = 2", new_string="b = 3")
    assert one.content == "Edited a.py: replaced 1 occurrence"
    assert f.read_bytes() == b"a = 1\r\nb = 3\r\na = 1\r\n"  # CRLF preserved
    every = run("edit_file", path="a.py", old_string="a = 1", new_string="a = 0", replace_all=True)
    assert every.content == "Edited a.py: replaced 2 occurrences"
    assert run("edit_file", path="a.py", old_string="", new_string="x").is_error
    assert run("edit_file", path="nope.py", old_string="a", new_string="b").is_error


def test_previews_are_unified_diffs(workdir):
    tools = {t.name: t for t in workspace_tools()}
    ctx = ToolContext(agent="alice", workdir=workdir)
    (workdir / "a.txt").write_text("one\ntwo\n")
    edit = tools["edit_file"]
    diff = edit.preview(edit.parse({"path": "a.txt", "old_string": "two", "new_string": "2"}), ctx)
    assert diff.splitlines()[:2] == ["--- a/a.txt", "+++ b/a.txt"]
    assert "-two" in diff and "+2" in diff
    write = tools["write_file"]
    new = write.preview(write.parse({"path": "b.txt", "content": "hi\n"}), ctx)
    assert "+hi" in new
    shell = tools["shell"]
    assert shell.preview(shell.parse({"command": "ls -la"}), ctx) == "ls -la"
    assert shell.rule_target(shell.parse({"command": "ls -la"})) == "ls -la"


def test_glob_is_sorted_and_capped(run, workdir):
    for name in ["b.py", "a.py", "sub/c.py", "sub/d.txt", ".git/x.py"]:
        (workdir / name).parent.mkdir(parents=True, exist_ok=True)
        (workdir / name).write_text("")
    assert run("glob", pattern="**/*.py").content.splitlines() == ["a.py", "b.py", "sub/c.py"]
    assert run("glob", pattern="*.py", path="sub").content == "sub/c.py"
    assert run("glob", pattern="*.rs").content == "no files match *.rs"
    for i in range(520):
        (workdir / f"f{i:03}.log").write_text("")
    many = run("glob", pattern="*.log").content.splitlines()
    assert len(many) == 501 and "capped at 500" in many[-1]


def test_grep_reports_path_line_text_and_caps(run, workdir):
    (workdir / "src").mkdir()
    (workdir / "src/a.py").write_text("import os\ndef main():\n    os.exit(1)\n")
    (workdir / "notes.md").write_text("os is an acronym\n")
    out = run("grep", pattern=r"\bos\b", glob="*.py").content.splitlines()
    assert out == ["src/a.py:1: import os", "src/a.py:3:     os.exit(1)"]
    assert run("grep", pattern="acronym", path="notes.md").content == "notes.md:1: os is an acronym"
    assert "invalid regex" in run("grep", pattern="(").content
    (workdir / "big.txt").write_text("hit\n" * 300)
    capped = run("grep", pattern="hit", path="big.txt").content.splitlines()
    assert len(capped) == 201 and "capped at 200" in capped[-1]
