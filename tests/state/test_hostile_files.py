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
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_cli import cli
from agent_cli.board.store import TaskBoard
from agent_cli.errors import AgentCliError, CorruptFile, UserError
from agent_cli.permissions.policy import PermissionPolicy
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
