"""Idle teammates wait on a condition, not a poll: with the re-check intervals set to a full
minute, a message sent by another process (`agent-cli send`) and a task added by another
process (`agent-cli tasks add`) still reach an idle teammate at once, because the runtime's
FileWatcher (inotify) wakes it. A `.team/inbox` that is a symlink out is not watched through.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest
from support.team import WAIT, Reply, make_runtime

from agent_cli.filewatch import FileWatcher
from agent_cli.models.scripted import ScriptedModel

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify")


def cli(workdir: Path, *argv: str) -> None:
    subprocess.run([sys.executable, "-m", "agent_cli", "-C", str(workdir), *argv],
                   check=True, capture_output=True, timeout=60)


def test_another_process_wakes_an_idle_teammate_without_polling(workdir: Path) -> None:
    asked = threading.Event()
    seen: list[str] = []

    def answer(request):
        seen.append(request.messages[-1].text())
        asked.set()
        return Reply("noted.")

    model = ScriptedModel({"alice": [answer, answer]})
    rt = make_runtime(workdir, model, check_interval_s=60.0, watched_interval_s=60.0)
    try:
        rt.team.spawn("alice", "helper")
        assert rt.team.wait_quiet(WAIT), "alice never went idle"
        assert rt.watcher.active
        cli(workdir, "send", "--from", "lead", "--to", "alice", "from another process")
        assert asked.wait(WAIT), "a cross-process send did not wake the idle teammate"
        assert "from another process" in seen[0]
        asked.clear()
        assert rt.team.wait_quiet(WAIT)
        cli(workdir, "tasks", "add", "cross-process task")
        assert asked.wait(WAIT), "a cross-process task did not wake the idle teammate"
        assert "cross-process task" in seen[1]
    finally:
        rt.close(WAIT)
    assert not rt.watcher.active


def test_the_watcher_does_not_watch_through_a_symlinked_inbox(tmp_path: Path) -> None:
    work, outside = tmp_path / "work", tmp_path / "outside"
    (work / ".team").mkdir(parents=True)
    outside.mkdir()
    (work / ".team" / "inbox").symlink_to(outside)
    woken = threading.Event()
    watcher = FileWatcher(work, woken.set)
    assert watcher.start()
    try:
        (outside / "alice.jsonl").write_text("{}\n")  # through the link: not ours to watch
        assert not woken.wait(0.5)
        (work / ".tasks").mkdir()
        (work / ".tasks" / ".stamp").write_text("1:1\n")
        assert woken.wait(WAIT), "a real .tasks directory is watched once it appears"
    finally:
        watcher.close()


def test_without_inotify_waiters_fall_back_to_the_short_recheck(workdir: Path, monkeypatch
                                                                ) -> None:
    monkeypatch.setitem(sys.modules, "inotify_simple", None)  # import fails, as off Linux
    rt = make_runtime(workdir, ScriptedModel({}), check_interval_s=0.02, watched_interval_s=60)
    try:
        assert rt.watcher.start() is False and not rt.watcher.active
        assert rt.recheck_interval() == 0.02  # other processes' changes are still seen
    finally:
        rt.close(WAIT)
