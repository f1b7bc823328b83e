"""Project memory: AGENTS.md / CLAUDE.md / CLAUDE.local.md at several levels (root first), the
user's AGENTS.md, @imports (depth limit, escapes, missing), odd files, the 40 KB cut, the
system prompt of the lead and of teammates (also after a compaction), and /memory."""

from __future__ import annotations

import os
import subprocess
from io import StringIO
from pathlib import Path
from types import SimpleNamespace

import pytest
from rich.console import Console
from support.team import Call, Recorder, Reply, make_runtime

from agent_cli.memory import HEADING, MAX_BYTES, load_memory
from agent_cli.models.scripted import ScriptedModel
from agent_cli.ui.render import UiSettings
from agent_cli.ui.slash import SlashContext, dispatch

WAIT = 10.0


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "pkg" / "app").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_levels_load_root_first_up_to_the_repository_root(repo: Path, tmp_path: Path) -> None:
    write(tmp_path / "AGENTS.md", "ABOVE-THE-REPO")  # outside the repository: not read
    write(repo / "AGENTS.md", "ROOT-AGENTS")
    write(repo / "pkg" / "CLAUDE.md", "PKG-CLAUDE")
    write(repo / "pkg" / "app" / "AGENTS.md", "APP-AGENTS")
    write(repo / "pkg" / "app" / "CLAUDE.local.md", "APP-LOCAL")
    user = write(tmp_path / "user" / "AGENTS.md", "USER-PREFS").parent
    mem = load_memory(repo / "pkg" / "app", user)
    assert [f.path for f in mem.files] == [
        user.resolve() / "AGENTS.md", repo / "AGENTS.md", repo / "pkg" / "CLAUDE.md",
        repo / "pkg" / "app" / "AGENTS.md", repo / "pkg" / "app" / "CLAUDE.local.md"]
    block = mem.block()
    assert block.startswith(HEADING)
    order = [block.index(t) for t in ("USER-PREFS", "ROOT-AGENTS", "PKG-CLAUDE", "APP-AGENTS",
                                      "APP-LOCAL")]
    assert order == sorted(order) and "ABOVE-THE-REPO" not in block
    assert mem.warnings == []


def test_outside_a_repository_every_parent_up_to_the_root_is_read(tmp_path: Path) -> None:
    wd = tmp_path / "a" / "b"
    wd.mkdir(parents=True)
    write(tmp_path / "a" / "AGENTS.md", "PARENT\n@sibling.md\n@b/inside.md")
    write(tmp_path / "a" / "sibling.md", "SIBLING")  # above the workdir: not importable
    write(wd / "inside.md", "INSIDE")
    write(wd / "CLAUDE.md", "HERE")
    mem = load_memory(wd, None)
    assert "PARENT" in mem.block() and "HERE" in mem.block() and "INSIDE" in mem.block()
    assert mem.block().index("PARENT") < mem.block().index("HERE")
    assert "SIBLING" not in mem.block()
    assert len(mem.warnings) == 1 and "@sibling.md not imported (outside" in mem.warnings[0]


def test_imports_expand_relative_to_the_importing_file(repo: Path) -> None:
    write(repo / "AGENTS.md", "top\n@docs/style.md\nend\n")
    write(repo / "docs" / "style.md", "STYLE\n  @more/rules.md\n")
    write(repo / "docs" / "more" / "rules.md", "RULES")
    write(repo / "docs" / "code.md", "```\n@not/an/import.md\n```\n")
    mem = load_memory(repo, None)
    text = mem.block()
    assert "top\nSTYLE\nRULES\nend" in text
    assert [(f.path.name, f.imported_by.name if f.imported_by else None) for f in mem.files] == [
        ("AGENTS.md", None), ("style.md", "AGENTS.md"), ("rules.md", "style.md")]


def test_imports_nest_at_most_five_deep(repo: Path) -> None:
    write(repo / "AGENTS.md", "L0\n@l1.md")
    for i in range(1, 8):
        write(repo / f"l{i}.md", f"L{i}\n@l{i + 1}.md")
    mem = load_memory(repo, None)
    text = mem.block()
    assert all(f"L{i}" in text for i in range(6)) and "L6" not in text
    assert len([w for w in mem.warnings if "at most 5 deep" in w]) == 1


def test_a_missing_import_is_one_warning(repo: Path) -> None:
    write(repo / "AGENTS.md", "ok\n@docs/gone.md\nstill here")
    mem = load_memory(repo, None)
    assert "ok\nstill here" in mem.block()
    assert mem.warnings == [f"{repo / 'AGENTS.md'}:2: @docs/gone.md not found"]


@pytest.mark.parametrize("spelling", ["../secret.md", "/etc/passwd", "~/secret.md",
                                      "docs/../../secret.md", "link/secret.md", "alias.md"])
def test_an_import_cannot_leave_the_repository(repo: Path, tmp_path: Path, spelling: str) -> None:
    write(tmp_path / "secret.md", "TOP-SECRET")
    (repo / "link").symlink_to(tmp_path)  # a directory symlink pointing out of the repo
    (repo / "alias.md").symlink_to(tmp_path / "secret.md")
    write(repo / "AGENTS.md", f"before\n@{spelling}\nafter")
    mem = load_memory(repo, None)
    assert "TOP-SECRET" not in mem.block() and "root:" not in mem.block()
    assert "before\nafter" in mem.block()
    assert len(mem.warnings) == 1 and "not imported" in mem.warnings[0]


def test_a_memory_file_that_is_a_symlink_out_or_a_fifo_is_reported_never_read(
    repo: Path, tmp_path: Path
) -> None:
    write(tmp_path / "outside.md", "TOP-SECRET")
    (repo / "AGENTS.md").symlink_to(tmp_path / "outside.md")
    os.mkfifo(repo / "CLAUDE.md")  # reading it would block forever
    (repo / "CLAUDE.local.md").mkdir()
    mem = load_memory(repo, None)
    assert mem.files == [] and mem.block() == ""
    assert len(mem.warnings) == 3
    assert "points outside" in mem.warnings[0] and "not a regular file" in mem.warnings[1]


def test_an_import_cycle_or_a_repeat_is_loaded_once(repo: Path) -> None:
    write(repo / "AGENTS.md", "A\n@b.md")
    write(repo / "b.md", "B\n@AGENTS.md")
    (repo / "CLAUDE.md").symlink_to("AGENTS.md")  # the common CLAUDE.md -> AGENTS.md link
    mem = load_memory(repo, None)
    assert mem.block().count("A\nB") == 1 and len(mem.files) == 2


def test_a_fan_out_of_imports_stops_at_the_file_limit(repo: Path) -> None:
    from agent_cli.memory import MAX_FILES

    write(repo / "AGENTS.md", "\n".join(f"@f{i}.md" for i in range(MAX_FILES + 20)))
    for i in range(MAX_FILES + 20):
        write(repo / f"f{i}.md", f"F{i}")
    mem = load_memory(repo, None)
    assert len(mem.files) == MAX_FILES
    assert len([w for w in mem.warnings if f"at most {MAX_FILES} memory files" in w]) == 21


def test_a_file_over_40_kb_is_truncated_with_a_warning(repo: Path) -> None:
    write(repo / "AGENTS.md", "x" * (MAX_BYTES + 500) + "TAIL")
    mem = load_memory(repo, None)
    assert mem.files[0].truncated and mem.files[0].size == MAX_BYTES + 504
    assert "TAIL" not in mem.block() and "x" * 1000 in mem.block()
    assert "truncated" in mem.warnings[0] and "AGENTS.md" in mem.warnings[0]


def test_lead_and_teammates_carry_the_memory_in_their_system_prompt_after_compaction(
    repo: Path,
) -> None:
    write(repo / "AGENTS.md", "Always run the tests with -q.")
    model = ScriptedModel({
        "lead": [Reply("spawning", [Call("spawn_teammate", {"name": "alice", "role": "dev",
                                                     "prompt": "say hi"})]),
                 Reply("done")],
        "alice": [Reply("hi")],
    })
    rt = make_runtime(repo, model, compact_threshold_tokens=10**9,
                      append_system_prompt="LEAD-ONLY-EXTRA")
    rec = Recorder(rt)
    try:
        lead = rt.team.make_lead()
        lead.run_turn("start")
        rec.wait_event("TurnFinished", agent="alice")
        lead_req, mate_req = model.requests_for("lead")[0], model.requests_for("alice")[0]
        assert "Always run the tests with -q." in lead_req.system
        assert "Always run the tests with -q." in mate_req.system
        assert "LEAD-ONLY-EXTRA" in lead_req.system and "LEAD-ONLY-EXTRA" not in mate_req.system
        model.add("lead", Reply("summary of it all"), Reply("after compaction"))
        assert lead.compact("manual")
        lead.run_turn("go on")
        assert "Always run the tests with -q." in model.requests_for("lead")[-1].system
    finally:
        rt.broker.detach_ui()
        rt.close(5.0)


def test_slash_memory_lists_path_and_size_and_the_warnings(repo: Path) -> None:
    write(repo / "AGENTS.md", "hello\n@docs/x.md\n@gone.md\n")
    write(repo / "docs" / "x.md", "12345")
    model = ScriptedModel({})
    rt = make_runtime(repo, model)
    buf = StringIO()
    ctx = SlashContext(Console(file=buf, width=200, color_system=None), rt,
                       SimpleNamespace(busy=False, agent=None), UiSettings())
    assert dispatch(ctx, "/memory").ok
    out = buf.getvalue()
    size = (repo / "AGENTS.md").stat().st_size
    rows = [[c.strip() for c in line.split("│")] for line in out.splitlines() if "│" in line]
    assert rows == [["AGENTS.md", f"{size} B", ""],
                    ["docs/x.md", "5 B", "imported by AGENTS.md"]]
    assert "warning: " in out and "@gone.md not found" in out
    empty = make_runtime(repo / "pkg", model)
    (repo / "AGENTS.md").unlink()
    buf.truncate(0)
    ctx.runtime = empty
    dispatch(ctx, "/memory")
    assert "No memory files loaded" in buf.getvalue()
