"""The file roster: config.json on disk, corrupt files, pids on this host and a runtime's
own entries (the semantics both backends share are in test_roster_contract.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from support.team import WAIT, Recorder, make_runtime

from agent_cli import errors
from agent_cli.errors import StorageError, UserError
from agent_cli.models.scripted import ScriptedModel
from agent_cli.team.roster import Roster, this_host


@pytest.fixture
def roster(workdir: Path) -> Roster:
    return Roster(workdir / ".team", team_name="demo")


def test_add_and_update_are_on_disk_with_updated_at(roster: Roster) -> None:
    roster.add("alice", "tester", model="demo")
    first = roster.get("alice")
    assert first is not None and first.status == "idle" and first.current_task is None
    roster.update("alice", status="working", current_task=3)
    data = json.loads(roster.path.read_text())
    assert data["team"] == "demo"
    (entry,) = data["members"]
    assert entry["name"] == "alice" and entry["role"] == "tester" and entry["model"] == "demo"
    assert (entry["status"], entry["current_task"]) == ("working", 3)
    assert entry["updated_at"] >= first.updated_at
    # another process's view is the same file
    assert Roster(roster.team_dir).get("alice").current_task == 3


@pytest.mark.parametrize(
    "fields, error",
    [
        ({"status": "sleeping"}, UserError),
        ({"current_task": "three"}, UserError),
        ({"colour": "red"}, UserError),
        ({"name": "bob"}, UserError),
    ],
)
def test_bad_updates_are_refused_and_change_nothing(roster: Roster, fields, error) -> None:
    roster.add("alice", "tester")
    before = roster.path.read_bytes()
    with pytest.raises(error):
        roster.update("alice", **fields)
    assert roster.path.read_bytes() == before


@pytest.mark.parametrize(
    "garbage",
    [b"{not json", b'{"team": "demo", "members": [{"name": "../x"}]}', b"[]", b"\xff\xfe"],
)
def test_corrupt_config_is_reported_by_name_and_set_aside_on_next_write(
    roster: Roster, garbage: bytes
) -> None:
    roster.team_dir.mkdir(parents=True)
    roster.path.write_bytes(garbage)
    snap = roster.snapshot()  # a reader never crashes...
    assert snap.members == []
    assert "config.json" in snap.problem  # ...and is told which file is wrong
    assert roster.get("alice") is None
    assert roster.path.read_bytes() == garbage  # reading changed nothing
    roster.add("alice", "tester")
    (kept,) = roster.team_dir.glob("config.json.corrupt-*")
    assert kept.read_bytes() == garbage  # set aside, never deleted
    assert [m.name for m in roster.members()] == ["alice"]
    assert roster.snapshot().problem is None


def test_duplicate_member_entries_are_a_corrupt_file(roster: Roster) -> None:
    roster.add("alice", "tester")
    data = json.loads(roster.path.read_text())
    data["members"].append(data["members"][0])
    roster.path.write_text(json.dumps(data))
    assert "listed twice" in roster.snapshot().problem




def test_roster_and_protocol_writes_name_a_team_dir_they_cannot_create(workdir):
    from agent_cli.team.protocol import ProtocolStore
    from agent_cli.team.roster import Roster

    (workdir / "blocked").write_text("a file where the team directory should be")
    with pytest.raises(StorageError, match="blocked"):
        Roster(workdir / "blocked").add("alice", "coder")
    with pytest.raises(StorageError, match="blocked"):
        ProtocolStore(workdir / "blocked").create("shutdown", "lead", "alice")


def test_the_roster_records_the_running_process_and_clears_it_on_shutdown(workdir, cleanup):
    rt = make_runtime(workdir, ScriptedModel({"*": []}))
    rec = Recorder(rt)
    rt.team.spawn("alice", "coder")
    rec.status("alice", "idle")
    rt.team.status.flush(WAIT)
    member = rt.roster.get("alice")
    assert (member.pid, member.host) == (os.getpid(), this_host())
    assert rt.roster.is_alive(member)

    assert rt.close(WAIT) == []
    member = rt.roster.get("alice")
    assert member.status == "shutdown" and (member.pid, member.host) == (None, None)
    assert not rt.roster.is_alive(member)


def test_is_alive_checks_the_process_and_the_host(workdir):
    roster = Roster(workdir / ".team")
    roster.add("alice", "coder")
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                             stdin=subprocess.PIPE)
    try:
        alive = roster.update("alice", pid=child.pid, host=this_host())
        assert roster.is_alive(alive)
        assert not roster.is_alive(alive.model_copy(update={"host": "elsewhere"}))
        with pytest.raises(errors.Refused, match=f"running in process {child.pid}"):
            roster.add_running("alice", "coder")
        assert roster.get("alice").pid == child.pid  # the refusal changed nothing
    finally:
        child.stdin.close()
        child.wait(WAIT)
    assert not roster.is_alive(roster.get("alice"))
    mine = roster.add_running("alice", "coder")
    assert mine.pid == os.getpid()
    assert not roster.is_alive(mine)  # our pid, but no teammate thread of ours runs it
    assert roster.add_running("alice", "coder").pid == os.getpid()  # ours to restart


CHILD = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from agent_cli.models.scripted import ScriptedModel
    from agent_cli.app import open_runtime
    from agent_cli.runtime import RuntimeConfig
    model = ScriptedModel({"*": []})
    rt = open_runtime(Path(sys.argv[1]), RuntimeConfig(model_factory=lambda a, s: model,
                                                       idle_timeout_s=0, check_interval_s=0.02))
    rt.team.spawn("alice", "coder")
    rt.team.status.flush(10)
    print("ready", flush=True)
    sys.stdin.read()
    print("busy:", rt.close(10), flush=True)
    """
)


def test_another_process_sees_a_teammate_alive_while_its_session_runs_it(workdir):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(workdir)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert child.stdout.readline().strip() == "ready"
        roster = Roster(workdir / ".team")
        member = roster.get("alice")
        assert member.pid == child.pid and roster.is_alive(member)
        with pytest.raises(errors.Refused, match="already running in process"):
            roster.add_running("alice", "coder")
    finally:
        child.stdin.close()
        out = child.stdout.read()
        child.wait(WAIT)
    assert "busy: []" in out
    member = Roster(workdir / ".team").get("alice")
    assert member.pid is None and not Roster(workdir / ".team").is_alive(member)
