"""Hostile names and paths: `../`, absolute paths, symlinks out of the workdir, NUL bytes, very
long names, unicode look-alikes ('аlice' with a Cyrillic а, a full-width slash).

Teammate and inbox names must be lowercase ASCII slugs before they touch a path; file tools
stay inside the workdir whatever the path says, even in bypassPermissions mode. Each refusal
is one clear line (an InvalidName, a ToolError result, exit 2 on the command line) and
nothing outside the workdir is read, created or changed.
"""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path

import pytest

from agent_cli import cli
from agent_cli.agent.tool_calls import ToolRunner
from agent_cli.app import open_runtime
from agent_cli.errors import InvalidName
from agent_cli.models.base import ToolUseBlock
from agent_cli.runtime import Runtime, RuntimeConfig
from agent_cli.team.team_tools import lead_tools
from agent_cli.tools.base import ToolContext, ToolSet
from agent_cli.tools.workspace import workspace_tools

BAD_NAMES = [
    "../alice", "/etc/passwd", "alice/../bob", "a\x00b", "a" * 200, "\u0430lice",  # Cyrillic а
    "ａｌｉｃｅ", "alice\uff0fbob", "Alice", "alice\n", "", " ", ".", "..", "-x", "lead\u200b",
]


def run_cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        try:
            code = cli.main(list(argv))
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue()


def tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@pytest.mark.parametrize("name", BAD_NAMES)
def test_a_hostile_teammate_or_inbox_name_is_refused_before_any_path(workdir, name):
    rt = open_runtime(workdir, RuntimeConfig(model="demo"))
    before = tree(workdir.parent)
    with pytest.raises(InvalidName):
        rt.team.spawn(name, "worker")
    for call in (lambda: rt.mail.send("lead", name, "hi"), lambda: rt.mail.send(name, "lead", "x"),
                 lambda: rt.mail.fetch(name), lambda: rt.board.claim_next(name),
                 lambda: rt.roster.add(name, "worker")):
        with pytest.raises(InvalidName) as err:
            call()
        assert "\n" not in str(err.value)
    assert tree(workdir.parent) == before
    assert rt.team.running() == []


@pytest.mark.parametrize("name", ["../alice", "/tmp/x", "\u0430lice", "ａｌｉｃｅ", "a" * 100])
def test_hostile_names_on_the_command_line_exit_2_in_one_line(workdir, name):
    before = tree(workdir.parent)
    for argv in (["send", "--from", "lead", "--to", name, "hi"],
                 ["send", "--from", name, "--to", "lead", "hi"],
                 ["inbox", name], ["tasks", "claim", "--as", name],
                 ["tasks", "add", "x", "--as", name]):
        code, out = run_cli("-C", str(workdir), *argv)
        assert code == 2, (argv, out)
        assert out.count("\n") == 1 and "invalid" in out and "Traceback" not in out
    assert tree(workdir.parent) == before


def test_the_spawn_tool_answers_a_hostile_name_with_an_error_result(workdir):
    rt = open_runtime(workdir, RuntimeConfig(model="demo"))
    runner = ToolRunner("lead", ToolSet(lead_tools(rt.team)), rt.gate, lambda e: None,
                        lambda: ToolContext("lead", workdir))
    for name in ("../evil", "\u0430lice", "a\x00"):
        out = runner.run_one(ToolUseBlock(id="t1", name="spawn_teammate",
                                          input={"name": name, "role": "x"}))
        assert out.is_error and "invalid teammate name" in out.content
    assert rt.team.running() == [] and rt.roster.members() == []


def test_task_ids_that_are_not_numbers_are_refused(workdir):
    for argv in (["tasks", "show", "../1"], ["tasks", "release", "1;rm", "--as", "bob"],
                 ["tasks", "add", "x", "--blocked-by", "/etc"]):
        code, out = run_cli("-C", str(workdir), *argv)
        assert code == 2 and "Traceback" not in out and "invalid int value" in out
    rt = open_runtime(workdir, RuntimeConfig(model="demo"))
    runner = ToolRunner("lead", ToolSet(lead_tools(rt.team)), rt.gate, lambda e: None,
                        lambda: ToolContext("lead", workdir))
    out = runner.run_one(ToolUseBlock(id="t", name="get_task", input={"task_id": "../1"}))
    assert out.is_error and "task_id" in out.content


def test_a_symlinked_task_file_is_never_followed(workdir, tmp_path):
    secret = tmp_path / "secret.json"
    secret.write_text('{"id": 5, "subject": "stolen", "created_at": "x", "updated_at": "x"}')
    rt = open_runtime(workdir, RuntimeConfig(model="demo"))
    rt.board.create("real")
    os.symlink(secret, workdir / ".tasks" / "task_5.json")
    problems = rt.board.doctor()
    assert len([p for p in problems if p.path.endswith("task_5.json")]) == 1
    assert "stolen" not in run_cli("-C", str(workdir), "tasks", "list")[1]
    assert secret.exists()


# ----- file tools ------------------------------------------------------------------------------
@pytest.fixture
def outside(tmp_path: Path) -> Path:
    d = tmp_path / "outside"
    d.mkdir()
    (d / "secret.txt").write_text("top secret\n")
    return d


def file_runner(workdir: Path) -> tuple[ToolRunner, Runtime]:
    """Tools in bypassPermissions: only confinement stands between a path and the disk."""
    rt = open_runtime(workdir, RuntimeConfig(permission_mode="bypassPermissions",
                                             allow_bypass=True))
    runner = ToolRunner("alice", ToolSet(workspace_tools()), rt.gate, lambda e: None,
                        lambda: ToolContext("alice", workdir))
    return runner, rt


def hostile_paths(workdir: Path, outside: Path) -> list[str]:
    (workdir / "link_out").symlink_to(outside)
    (workdir / "file_link").symlink_to(outside / "secret.txt")
    return [
        "../outside/secret.txt", str(outside / "secret.txt"), "link_out/secret.txt",
        "file_link", "link_out/new.txt", "sub/../../outside/secret.txt", "a\x00b",
        "x" * 5000, ("y" * 300) + "/z", "~/../../" + str(outside)[1:] + "/secret.txt",
    ]


def test_file_tools_never_leave_the_workdir_even_in_bypass_mode(workdir, outside):
    runner, _ = file_runner(workdir)
    before = {p: p.read_bytes() for p in outside.iterdir()}
    for path in hostile_paths(workdir, outside):
        calls = [("read_file", {"path": path}), ("write_file", {"path": path, "content": "0wn"}),
                 ("edit_file", {"path": path, "old_string": "top", "new_string": "0wn"}),
                 ("grep", {"pattern": "secret", "path": path}), ("glob", {"pattern": "*",
                                                                          "path": path})]
        for tool, args in calls:
            out = runner.run_one(ToolUseBlock(id="t", name=tool, input=args))
            assert out.is_error, (tool, path, out.content)
            assert "top secret" not in out.content
            assert "\n" not in out.content.strip(), (tool, path, out.content)
    for pattern in ("../*", "/*", "../outside/*", "link_out/*"):
        out = runner.run_one(ToolUseBlock(id="t", name="glob", input={"pattern": pattern}))
        assert "secret" not in out.content, pattern
    assert {p: p.read_bytes() for p in outside.iterdir()} == before


def test_look_alike_names_stay_plain_files_inside_the_workdir(workdir, outside):
    runner, _ = file_runner(workdir)
    for name in ("ｆｕｌｌ／ｗｉｄｔｈ.txt", "\u0430lice.txt", "a\u2215b.txt"):  # ／ and ∕
        out = runner.run_one(ToolUseBlock(id="t", name="write_file",
                                          input={"path": name, "content": "ok\n"}))
        assert not out.is_error, out.content
        assert (workdir / name).is_file()  # one file: the slash look-alike is no separator
    assert not any(p.name.endswith(".tmp") for p in workdir.rglob("*"))
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
