"""Random bytes and random JSON in every state file a user (or a crash) can leave behind:
task files, inbox lines, requests.json, config.json and .agent-cli/settings.json.

Whatever the content: no traceback, no crash; the damaged file is named in a one-line error
or problem; the good state next to it keeps working; the damaged file is never deleted or
rewritten (a corrupt requests.json is set aside under a new name, never removed).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.team import (
    WAIT,
    Call,
    FakeHuman,
    Recorder,
    Reply,
    make_runtime,
)

from agent_cli import cli
from agent_cli.board.store import TaskBoard
from agent_cli.errors import AgentCliError, CorruptFile, UserError
from agent_cli.models.scripted import ScriptedModel
from agent_cli.permissions.policy import PermissionPolicy
from agent_cli.team import plans
from agent_cli.team.mailbox import Mailbox
from agent_cli.team.protocol import ProtocolStore
from agent_cli.team.roster import Roster

FAST = settings(max_examples=40, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                 max_size=4),
    max_leaves=12,
)
# valid-looking shapes with wrong values, the harder case for a parser
task_like = st.fixed_dictionaries({}, optional={
    "id": json_values, "subject": json_values, "status": json_values, "owner": json_values,
    "blockedBy": json_values, "claim_token": json_values, "created_at": json_values,
})
hostile = st.binary(max_size=200) | json_values.map(
    lambda v: json.dumps(v).encode()) | task_like.map(lambda v: json.dumps(v).encode())


def run_cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        try:
            code = cli.main(list(argv))
        except SystemExit as exc:  # argparse
            code = exc.code
    return code, out.getvalue()


def fresh() -> Path:
    return Path(tempfile.mkdtemp(prefix="hostile-"))


@FAST
@given(content=hostile)
def test_a_hostile_task_file_is_named_and_the_rest_of_the_board_works(content):
    wd = fresh()
    board = TaskBoard(wd / ".tasks")
    board.create("good")
    bad = wd / ".tasks" / "task_7.json"
    bad.write_bytes(content)

    snap = TaskBoard(wd / ".tasks").snapshot()  # a fresh reader, as another process
    assert [t.subject for t in snap.tasks][:1] == ["good"]
    named = [p for p in board.doctor() if p.path.endswith("task_7.json")]
    if not any(t.id == 7 for t in snap.tasks):
        assert named, "an unreadable task file must be reported by name"
        assert [p for p in snap.problems if p.path.endswith("task_7.json")]
    code, out = run_cli("-C", str(wd), "tasks", "doctor")
    assert "Traceback" not in out and code in (0, 1)
    code, out = run_cli("-C", str(wd), "tasks", "list")
    assert code == 0 and "Traceback" not in out
    assert board.claim_next("alice").task is not None  # the good task is still claimable
    assert bad.read_bytes() == content  # never deleted, never rewritten


@FAST
@given(lines=st.lists(st.binary(max_size=120).filter(lambda b: b"\n" not in b), max_size=4))
def test_hostile_inbox_lines_are_quarantined_and_good_messages_delivered(lines):
    wd = fresh()
    mail = Mailbox(wd / ".team")
    mail.send("bob", "alice", "first")
    path = mail.inbox_path("alice")
    with open(path, "ab") as fh:
        for raw in lines:
            fh.write(raw + b"\n")
    mail.send("bob", "alice", "last")
    before = path.read_bytes()

    delivery = mail.fetch("alice")
    contents = [m.content for m in delivery.messages]
    assert contents[0] == "first" and contents[-1] == "last"
    for problem in delivery.problems:
        assert str(path) in problem and "\n" not in problem
    mail.ack("alice", delivery.cursor)
    assert mail.fetch("alice").messages == []
    code, out = run_cli("-C", str(wd), "inbox", "alice")
    assert code == 0 and "Traceback" not in out
    assert path.read_bytes() == before


@FAST
@given(content=hostile)
def test_a_hostile_requests_json_fails_closed_and_is_set_aside_not_deleted(content):
    wd = fresh()
    store = ProtocolStore(wd / ".team")
    path = wd / ".team" / "requests.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    try:
        store.pending()
    except CorruptFile as exc:
        assert "requests.json" in str(exc) and "\n" not in str(exc)
    else:  # it parsed: then it must have been valid state
        assert path.read_bytes() == content
        return
    req = store.create("shutdown", "lead", "alice")
    assert store.get(req.id).status == "pending"
    kept = list(path.parent.glob("requests.json.corrupt-*"))
    assert len(kept) == 1 and kept[0].read_bytes() == content


@FAST
@given(content=hostile)
def test_a_hostile_config_json_is_reported_and_never_crashes_the_team_commands(content):
    wd = fresh()
    path = wd / ".team" / "config.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    snap = Roster(wd / ".team").snapshot()
    if snap.problem:
        assert "config.json" in snap.problem
    for argv in (["team"], ["send", "--from", "lead", "--to", "alice", "hi"]):
        code, out = run_cli("-C", str(wd), *argv)
        assert "Traceback" not in out and code in (0, 1, 2, 3)
        if code:
            assert len(out.strip().splitlines()) <= 2 or argv == ["team"]
    assert path.read_bytes() == content


@FAST
@given(content=hostile)
def test_a_hostile_settings_json_is_one_line_naming_the_file(content):
    wd = fresh()
    path = wd / ".agent-cli" / "settings.json"
    path.parent.mkdir()
    path.write_bytes(content)
    try:
        policy = PermissionPolicy(wd)
    except UserError as exc:
        assert "settings.json" in str(exc) and "\n" not in str(exc)
    else:
        assert all(r.source for r in policy.rules())
    code, out = run_cli("-C", str(wd), "-p", "hello", "--model", "demo")
    assert "Traceback" not in out
    assert path.read_bytes() == content


@pytest.mark.parametrize("name", ["config.json", "requests.json"])
def test_team_state_that_is_a_directory_or_unreadable_is_a_clear_error(workdir, name):
    (workdir / ".team" / name).mkdir(parents=True)
    code, out = run_cli("-C", str(workdir), "team")
    assert "Traceback" not in out
    try:
        Roster(workdir / ".team").snapshot()
        ProtocolStore(workdir / ".team").pending()
    except AgentCliError as exc:
        assert name in str(exc)


UNREADABLE = "cannot read .team/requests.json"


def _corrupt(path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{garbage")


def _reasons(rec: Recorder, agent: str) -> list[str]:
    return [e.reason for e in rec.of("StatusEvent", agent=agent)]


def test_unreadable_requests_json_leaves_an_idle_teammate_idle_without_claiming(workdir, cleanup):
    rt = make_runtime(workdir, ScriptedModel({"alice": [Reply("on it")]}))
    cleanup(rt)
    rec = Recorder(rt)
    rt.team.spawn("alice", "coder")
    rec.status("alice", "idle")
    _corrupt(workdir / ".team" / "requests.json")

    task = rt.board.create("ready work")  # wakes alice: her claim path reads the plan state
    rec.wait_for(lambda: any(r.startswith(UNREADABLE) for r in _reasons(rec, "alice")),
                 what="alice idle because requests.json is unreadable")
    assert rt.team.wait_quiet(WAIT)
    assert rt.board.get(task.id).status == "pending"  # fail closed: nothing claimed
    assert rec.of("StatusEvent", agent="alice", status="failed") == []
    assert rt.team.teammate("alice").alive()
    member = rt.roster.get("alice")
    assert member.status == "idle" and member.idle_reason.startswith(UNREADABLE)

    (workdir / ".team" / "requests.json").unlink()  # the user repairs it
    rt.board.create("more work")
    rec.wait_event("TaskEvent", agent="alice", action="claimed", task_id=task.id)


def test_a_plan_answer_read_from_a_corrupt_store_is_refused_without_failing(workdir, cleanup):
    model = ScriptedModel({"alice": [
        Reply(tool_calls=[Call("submit_plan", {"plan": "1. edit"})]),
        Reply(tool_calls=[Call("idle", {})]),
    ]})
    rt = make_runtime(workdir, model)
    cleanup(rt)
    rec = Recorder(rt)
    rt.team.spawn("alice", "coder", prompt="plan first", require_plan=True)
    rec.status("alice", "waiting_plan")
    req = rt.protocols.latest_plan("alice")
    _corrupt(workdir / ".team" / "requests.json")

    rt.mail.send("lead", "alice", "plan approved", "plan_approval_response",
                 request_id=req.id, approve=True)
    rec.wait_for(lambda: any(UNREADABLE in e.text for e in rec.of("Notice", agent="alice")),
                 what="warning about the unreadable store")
    rec.wait_for(lambda: any(r.startswith(UNREADABLE) for r in _reasons(rec, "alice")),
                 what="alice idle")
    assert rec.of("StatusEvent", agent="alice", status="failed") == []
    assert rt.team.teammate("alice").alive()
    # repaired before closing: Team.request_shutdown (manager.py) still raises CorruptFile
    (workdir / ".team" / "requests.json").unlink()


def test_a_plan_the_store_lost_keeps_the_gate_and_claims_closed(workdir, cleanup):
    write = Call("write_file", {"path": "out.txt", "content": "x"})
    model = ScriptedModel({"alice": [
        Reply(tool_calls=[Call("submit_plan", {"plan": "1. write out.txt"})]),
        Reply(tool_calls=[Call("idle", {})]),
        Reply(tool_calls=[write]),  # after the store lost her pending plan
        Reply(tool_calls=[Call("idle", {})]),
    ]})
    rt = make_runtime(workdir, model)
    cleanup(rt)
    rec = Recorder(rt)
    human = FakeHuman(rt, lambda req: "allow_once")  # would allow anything it is asked
    rt.team.spawn("alice", "coder", prompt="plan, then write")  # no require_plan
    rec.status("alice", "waiting_plan")
    _corrupt(workdir / ".team" / "requests.json")
    rt.protocols.create("shutdown", "lead", "bob")  # sets the corrupt file aside: store empty
    assert rt.protocols.latest_plan("alice") is None
    task = rt.board.create("ready work")

    rt.mail.send("lead", "alice", "carry on")
    rec.wait_for(lambda: len(rec.of("TurnFinished", agent="alice")) == 2, what="second turn")
    assert rt.team.wait_quiet(WAIT)
    human.close()

    [result] = rec.of("ToolFinished", agent="alice", tool="write_file")
    assert not result.ok and "no longer on record" in result.outcome
    assert human.asked == [] and not (workdir / "out.txt").exists()
    assert rt.board.get(task.id).status == "pending"
    assert "plan request lost: submit_plan again" in _reasons(rec, "alice")


def test_a_remembered_approved_plan_does_not_block(workdir):
    memory = plans.PlanMemory()
    rt_dir = workdir / ".team"

    store = ProtocolStore(rt_dir)
    req = store.create("plan_approval", "alice", "lead", "p")
    memory.note(store.resolve(req.id, "plan_approval", "lead", "alice", True))
    _corrupt(rt_dir / "requests.json")
    store.create("shutdown", "lead", "bob")  # set aside: the store forgot the plan
    assert plans.plan_block(store, "alice", True, known=memory.known) is None
    assert memory.lost_block(store, "alice") is None
    pending = store.create("plan_approval", "alice", "lead", "newer plan")
    assert plans.plan_block(store, "alice", False, known=memory.known) == plans.PENDING
    assert memory.state(store, "alice") == (pending, False)  # the store's newer plan decides


def test_live_teammates_are_registered_again_after_the_roster_is_set_aside(workdir, cleanup):
    # the claimant never completes: reminded twice, then reported; it keeps the task
    rt = make_runtime(workdir, ScriptedModel({"*": [Reply("on it")] * 3}))
    cleanup(rt)
    rec = Recorder(rt)
    rt.team.spawn("alice", "coder", model="demo")
    rt.team.spawn("bob", "tester", require_plan=False)
    rec.status("alice", "idle")
    rec.status("bob", "idle")
    (workdir / ".team" / "config.json").write_text("\x00\x01 not json")

    task = rt.board.create("A")  # the claimant's status write meets the corrupt roster
    claimed = rec.wait_event("TaskEvent", action="claimed", task_id=task.id)
    assert rt.team.wait_quiet(WAIT)

    members = {m.name: m for m in rt.roster.members()}
    assert set(members) == {"alice", "bob"}
    assert members["alice"].role == "coder" and members["alice"].model == "demo"
    assert members[claimed.agent].current_task == task.id
    assert all(m.pid == os.getpid() for m in members.values())
    assert list((workdir / ".team").glob("config.json.corrupt-*"))  # kept, not deleted
