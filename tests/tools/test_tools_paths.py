"""Workdir confinement for every file tool: `..`, absolute paths, symlinks, NUL, long names."""

from __future__ import annotations

import pytest

from agent_cli.tools.base import ToolContext
from agent_cli.tools.workspace import workspace_tools


@pytest.fixture
def env(tmp_path):
    work = tmp_path / "work"
    outside = tmp_path / "outside"
    work.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("top secret\n")
    (work / "inside.txt").write_text("hello\n")
    (work / "link_dir").symlink_to(outside)
    (work / "link_file").symlink_to(outside / "secret.txt")
    (work / "dangling").symlink_to(outside / "new.txt")
    (work / "ok_link").symlink_to(work / "inside.txt")
    tools = {t.name: t for t in workspace_tools()}
    ctx = ToolContext(agent="alice", workdir=work)
    return tools, ctx, outside


def call(tools, ctx, name, **raw):
    tool = tools[name]
    return tool.run(tool.parse(raw), ctx)


ESCAPES = [
    ("../outside/secret.txt", "outside the workdir"),
    ("a/../../outside/secret.txt", "outside the workdir"),
    ("link_dir/secret.txt", "symlink"),
    ("link_file", "symlink"),
    ("dangling", "symlink"),
    ("a\x00b", "NUL"),
    ("x" * 300, "longer than 255"),
    ("a/" * 2100, "too long"),
    ("", "empty"),
]


@pytest.mark.parametrize("raw, why", ESCAPES)
def test_reads_are_refused_outside_the_workdir(env, raw, why):
    tools, ctx, _ = env
    out = call(tools, ctx, "read_file", path=raw)
    assert out.is_error and why in out.content
    assert "top secret" not in out.content


@pytest.mark.parametrize("raw, why", ESCAPES)
def test_writes_never_land_outside_the_workdir(env, raw, why):
    tools, ctx, outside = env
    out = call(tools, ctx, "write_file", path=raw, content="pwned")
    assert out.is_error and why in out.content
    edit = call(tools, ctx, "edit_file", path=raw, old_string="top", new_string="pwned")
    assert edit.is_error
    assert (outside / "secret.txt").read_text() == "top secret\n"
    assert not (outside / "new.txt").exists()
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


def test_absolute_paths_inside_are_fine_and_outside_are_refused(env):
    tools, ctx, outside = env
    inside = call(tools, ctx, "read_file", path=str(ctx.workdir / "inside.txt"))
    assert not inside.is_error and "hello" in inside.content
    out = call(tools, ctx, "read_file", path=str(outside / "secret.txt"))
    assert out.is_error and "is outside the workdir" in out.content
    out = call(tools, ctx, "write_file", path="/etc/agent-cli-test", content="x")
    assert out.is_error and "outside the workdir" in out.content


def test_home_relative_paths_are_outside(env):
    tools, ctx, _ = env
    out = call(tools, ctx, "write_file", path="~/agent-cli-test", content="x")
    assert out.is_error and "outside the workdir" in out.content


def test_a_symlink_that_stays_inside_is_followed(env):
    tools, ctx, _ = env
    assert call(tools, ctx, "write_file", path="ok_link", content="bye\n").content.startswith(
        "Overwrote inside.txt"
    )
    assert (ctx.workdir / "inside.txt").read_text() == "bye\n"


def test_search_tools_do_not_follow_links_out(env):
    tools, ctx, _ = env
    found = call(tools, ctx, "glob", pattern="**/*.txt")
    assert "secret" not in found.content and "inside.txt" in found.content
    hits = call(tools, ctx, "grep", pattern="secret|hello")
    assert "top secret" not in hits.content and "inside.txt:1: hello" in hits.content
    assert call(tools, ctx, "glob", pattern="../*").is_error
    assert call(tools, ctx, "grep", pattern="x", path="link_dir").is_error


def test_unicode_look_alikes_are_plain_names_inside_the_workdir(env):
    tools, ctx, outside = env
    for name in ["\u2024\u2024/x.txt", "\uff0e\uff0e/y.txt", "..\u2215z.txt"]:
        out = call(tools, ctx, "write_file", path=name, content="ok")
        assert not out.is_error, out.content
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (ctx.workdir / "\u2024\u2024" / "x.txt").read_text() == "ok"
