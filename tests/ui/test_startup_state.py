"""Start-up builds the stores only for state that is there: a fresh workdir's first prompt
and toolbar read nothing, yet a board, team or mail written before (or meanwhile, by another
process) is shown, and tasks a gone teammate held are still offered for release. Outside a
repository no git process is spawned to find that out."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from support.team import WAIT

from agent_cli.app import open_runtime
from agent_cli.board.store import TaskBoard
from agent_cli.models.scripted import ScriptedModel
from agent_cli.runtime import Runtime, RuntimeConfig
from agent_cli.team.mailbox import Mailbox
from agent_cli.team.roster import Roster
from agent_cli.ui.toolbar import StatusCache, toolbar_fragments


def runtime(workdir: Path) -> Runtime:
    model = ScriptedModel({})
    return open_runtime(workdir, RuntimeConfig(model_factory=lambda a, s: model))


def toolbar_text(cache: StatusCache) -> str:
    return "".join(t for _, t in toolbar_fragments(cache.get(), "m", "default", 0))


def test_a_fresh_workdirs_toolbar_builds_no_store_until_another_process_writes(
        workdir: Path, cleanup) -> None:
    rt = runtime(workdir)
    cleanup(rt)
    cache = StatusCache(rt)
    assert "0 pending" in toolbar_text(cache) and "no teammates" in toolbar_text(cache)
    assert not rt.stores_open
    # another agent-cli (or `agent-cli tasks add`) writes with its own stores
    TaskBoard(workdir / ".tasks").create("from elsewhere")
    Roster(workdir / ".team").add("alice", "tester")
    Mailbox(workdir / ".team").send("alice", "lead", "hello")
    cache.mark_stale()
    text = toolbar_text(cache)
    assert "1 pending" in text and "alice" in text and "✉ 1 for lead" in text
    assert rt.stores_open


def test_the_stores_are_built_once_whichever_threads_ask_first(workdir: Path, cleanup) -> None:
    rt = runtime(workdir)
    cleanup(rt)
    mine = object()
    rt.protocols = mine  # a store put in place first is kept (tests inject clocks this way)
    barrier = threading.Barrier(8)
    seen: list[tuple[object, object]] = []

    def read() -> None:
        barrier.wait(WAIT)
        seen.append((rt.board, rt.roster))

    threads = [threading.Thread(target=read) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT)
    assert len(seen) == 8 and len(set(seen)) == 1
    assert rt.protocols is mine and rt.mail is rt.mail


def test_tasks_a_gone_teammate_holds_are_offered_before_the_first_prompt(workdir: Path) -> None:
    pexpect = pytest.importorskip("pexpect")
    from support.repl_spawn import spawn_repl

    board = TaskBoard(workdir / ".tasks")
    task = board.create("left behind")
    board.claim(task.id, "ghost")
    child = spawn_repl(workdir, {})
    try:
        child.expect("in progress for teammates that are not running: #1 \\(@ghost\\)")
        child.expect_exact("Release them")
        child.send("y\r")
        child.expect("ghost +released #1 left behind")  # the board's own line, in the feed
        child.expect_exact("\x1b[?2004h")  # the first prompt is drawn (its terminal is raw)
        child.sendcontrol("d")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    on_disk = json.loads((workdir / ".tasks" / "task_1.json").read_text(encoding="utf-8"))
    assert on_disk["status"] == "pending" and on_disk["owner"] is None
    actions = [json.loads(line)["action"] for line in
               (workdir / ".tasks" / "events.jsonl").read_text(encoding="utf-8").splitlines()]
    assert actions[-1] == "released"


def test_git_is_asked_only_where_a_git_entry_could_make_a_work_tree(
        workdir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_cli.gitrepo import GitRepo

    calls = tmp_path / "git-calls"
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "git").write_text(f"#!/bin/sh\necho \"$PWD\" >> {calls}\nexit 128\n")
    (fake / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")
    assert GitRepo.find(workdir) is None and not calls.exists()  # no .git anywhere above
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "sub").mkdir()
    os.symlink(repo / "sub", tmp_path / "link")  # git sees the real place: inside the repo
    for where in (repo, repo / "sub", tmp_path / "link"):
        GitRepo.find(where)
    assert len(calls.read_text().splitlines()) == 3
