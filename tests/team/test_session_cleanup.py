"""cleanupPeriodDays: agent-cli's own sessions and teammate transcripts older than N days are
removed at start, said in one line; the running and the newest other session stay, a
repository's settings cannot ask for it, and nothing else under .team/ is touched."""

from __future__ import annotations

import contextlib
import io
import json
import os
import time
from pathlib import Path

import pytest
from support.claude_user import put_json as put

from agent_cli import cli as cli_mod
from agent_cli.permissions.layers import SettingsLayers
from agent_cli.team.cleanup import clean, period
from agent_cli.team.roster import this_host

DAY = 86400


def age(path: Path, days: float) -> None:
    """Make `path` (and what a folder holds) last written `days` ago."""
    when = time.time() - days * DAY
    for p in [*path.rglob("*"), path] if path.is_dir() else [path]:
        os.utime(p, (when, when), follow_symlinks=False)


def session(workdir: Path, sid: str, days: float, team: list[str] = (),
            said: bool = True) -> Path:
    """A session folder as agent-cli writes it, last written `days` ago."""
    d = workdir / ".team/transcripts/sessions" / sid
    d.mkdir(parents=True)
    stamp = f"{sid[:4]}-{sid[4:6]}-{sid[6:8]}T00:00:00Z"
    (d / "session.json").write_text(json.dumps({
        "id": sid, "started_at": stamp, "pid": 1, "host": "elsewhere", "mode": "repl",
        "team": list(team), "suspended": [], "ended_at": stamp}), encoding="utf-8")
    if said:
        (d / "lead.jsonl").write_text('{"kind": "message"}\n', encoding="utf-8")
    age(d, days)
    return d


def sid(n: int) -> str:
    return f"2026010{n}-120000000-00a{n}"


def run(workdir: Path, *argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = cli_mod.main(["-C", str(workdir), *argv])
    return code, out.getvalue()


def test_old_sessions_go_and_the_start_says_so(workdir: Path, claude_home: Path) -> None:
    put(claude_home / "settings.json", {"cleanupPeriodDays": 30})
    old = [session(workdir, sid(n), 40 + n, team=["bob"] if n == 1 else []) for n in (1, 2, 3)]
    newest_other = session(workdir, sid(4), 50)  # -c resumes it next: kept, though old
    recent = session(workdir, sid(0), 3)
    bob = workdir / ".team/transcripts/bob.jsonl"
    bob.write_text("{}\n", encoding="utf-8")
    other = workdir / ".team/transcripts/notes.txt"  # not agent-cli's name: never touched
    other.write_text("mine\n", encoding="utf-8")
    age(bob, 45)
    age(other, 400)
    code, out = run(workdir, "--model", "demo", "-p", "hello")
    assert code == 0, out
    assert ("removed 3 sessions and 1 teammate transcript older than 30 days "
            "(cleanupPeriodDays, ") in out
    assert not any(p.exists() for p in old) and not bob.exists()
    assert newest_other.exists() and recent.exists()
    left = {p.name for p in (workdir / ".team/transcripts/sessions").iterdir()}
    assert len(left) == 3  # the two kept and this run's own
    assert other.read_text() == "mine\n"


def test_the_newest_other_session_and_a_live_one_are_kept(workdir: Path) -> None:
    live = session(workdir, sid(1), 90)
    a = session(workdir, sid(2), 80)
    b = session(workdir, sid(3), 70)
    data = json.loads((live / "session.json").read_text())
    data.update(pid=os.getpid(), host=this_host(), ended_at=None)
    (live / "session.json").write_text(json.dumps(data))
    age(live, 90)
    removed = clean(workdir / ".team", 30, None)
    assert removed.sessions == 1 and not a.exists() and b.exists() and live.exists()


def test_a_repositorys_setting_is_ignored_and_named(workdir: Path, claude_home: Path) -> None:
    put(workdir / ".claude/settings.json", {"cleanupPeriodDays": 1})
    put(workdir / ".agent-cli/settings.json", {"cleanupPeriodDays": 1})
    got = period(SettingsLayers(workdir))
    assert got.days is None
    assert [n.split(":")[0] for n in got.notes] == [".claude/settings.json",
                                                    ".agent-cli/settings.json"]
    old = [session(workdir, sid(n), 400) for n in (1, 2, 3)]
    code, out = run(workdir, "--model", "demo", "-p", "hello")
    assert code == 0, out
    assert "cannot make agent-cli delete files" in out
    assert all(p.exists() for p in old)


@pytest.mark.parametrize("value", [0, -3, "7", True, 2.5])
def test_a_value_that_is_not_a_day_count_removes_nothing(workdir: Path, claude_home: Path,
                                                         value: object) -> None:
    put(claude_home / "settings.json", {"cleanupPeriodDays": value})
    got = period(SettingsLayers(workdir))
    assert got.days is None and "nothing removed" in got.notes[0]


def test_planted_links_and_odd_entries_are_never_followed_or_removed(
        workdir: Path, tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "session.json").write_text("keep me", encoding="utf-8")
    (victim / "lead.jsonl").write_text("keep me too", encoding="utf-8")
    sessions = workdir / ".team/transcripts/sessions"
    session(workdir, sid(9), 1)  # the newest other session: kept
    os.symlink(victim, sessions / sid(1))  # a session "folder" that is a link
    odd = session(workdir, sid(2), 400)
    (odd / "notes.txt").write_text("mine", encoding="utf-8")  # not agent-cli's file
    os.symlink(victim / "lead.jsonl", odd / "bob.jsonl")
    age(odd, 400)
    link = workdir / ".team/transcripts/carol.jsonl"
    os.symlink(victim / "session.json", link)
    os.mkfifo(workdir / ".team/transcripts/dave.jsonl")
    removed = clean(workdir / ".team", 30, None)
    assert sorted(p.name for p in victim.iterdir()) == ["lead.jsonl", "session.json"]
    assert (victim / "session.json").read_text() == "keep me"
    assert (odd / "notes.txt").read_text() == "mine" and (odd / "bob.jsonl").is_symlink()
    assert not (odd / "session.json").exists() and not (odd / "lead.jsonl").exists()
    assert link.is_symlink() and (workdir / ".team/transcripts/dave.jsonl").exists()
    assert removed.sessions == 1 and "left in place" in removed.kept[0]


def test_a_transcripts_folder_that_is_a_link_is_not_entered(workdir: Path,
                                                           tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "sessions" / sid(1)).mkdir(parents=True)
    (elsewhere / "sessions" / sid(1) / "session.json").write_text("{}")
    (elsewhere / "old.jsonl").write_text("{}")
    age(elsewhere, 400)
    (workdir / ".team").mkdir()
    os.symlink(elsewhere, workdir / ".team/transcripts")
    removed = clean(workdir / ".team", 1, None)
    assert removed.sessions == removed.transcripts == 0
    assert (elsewhere / "old.jsonl").exists()
    assert (elsewhere / "sessions" / sid(1) / "session.json").exists()
