"""Regression tests for review findings outside the team threads: task verify runs through the
shell runner (cancel, timeout, background jobs), `tasks complete` runs the verify, unreadable
inboxes are one-line errors, a failed result message does not fail complete_task, and the
JSON-lines readers share one torn-line rule."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from support.team import WAIT, make_runtime

from agent_cli import cli
from agent_cli.agent.transcript import read_records
from agent_cli.board.eventlog import read_events
from agent_cli.board.models import Verify
from agent_cli.board.store import TaskBoard
from agent_cli.errors import StorageError
from agent_cli.fsutil import read_jsonl
from agent_cli.models.scripted import ScriptedModel
from agent_cli.permissions.audit import AuditLog
from agent_cli.team import verify as verify_mod
from agent_cli.team.mailbox import Mailbox
from agent_cli.tools.base import ToolContext
from agent_cli.tools.board_tools import complete_task_tool
from agent_cli.tools.shell import run_process


def _gone(pid: int, timeout: float = 5.0) -> bool:
    """The process no longer runs (a zombie nobody reaped counts as gone). A SIGKILL just
    sent takes a moment to land on a loaded machine: wait for it on a pidfd, no polling."""
    import select

    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        if select.select([fd], [], [], timeout)[0]:
            return True
    finally:
        os.close(fd)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state in ("Z", "X")


def _in_thread(fn):
    """Run fn() on a thread; return its result, failing the test if it takes over WAIT s."""
    box: dict = {}
    done = threading.Event()

    def run():
        try:
            box["value"] = fn()
        finally:
            done.set()

    threading.Thread(target=run, daemon=True).start()
    assert done.wait(WAIT), "still running: the command was not stopped"
    return box["value"]


# ---- 3. task verify runs through the shell runner --------------------------------------------


def test_verify_is_stopped_by_the_callers_cancel_event(workdir):
    cancel = threading.Event()
    cancel.set()  # e.g. Esc was pressed while the verify was being approved
    check = Verify(command="sleep 60; echo 42", expected_stdout="42")
    outcome = _in_thread(lambda: verify_mod.check_verify(check, workdir, cancel))
    assert not outcome.passed and outcome.detail == "verify command interrupted by the user"


def test_verify_does_not_wait_for_background_jobs_and_stops_them(workdir):
    check = Verify(command="sleep 60 & echo $! > bg.pid; echo 42", expected_stdout="42")
    outcome = _in_thread(lambda: verify_mod.check_verify(check, workdir))
    assert outcome.passed
    assert _gone(int((workdir / "bg.pid").read_text()))


def test_a_verify_timeout_kills_the_whole_process_group(workdir, monkeypatch):
    monkeypatch.setattr(verify_mod, "VERIFY_TIMEOUT_S", 0.3)
    check = Verify(command="sleep 60 & echo $! > bg.pid; sleep 60")
    outcome = _in_thread(lambda: verify_mod.check_verify(check, workdir))
    assert not outcome.passed and outcome.detail == "verify command timed out after 0.3s"
    assert _gone(int((workdir / "bg.pid").read_text()))


def test_run_verify_passes_ctx_cancel_and_keeps_stderr_out_of_stdout(workdir):
    rt = make_runtime(workdir, ScriptedModel({"*": []}), allow=["Bash"])
    task = rt.board.create("v", verify={"command": "echo 42; echo oops >&2; exit 3",
                                        "expected_stdout": "42", "expected_exit_code": 3})
    ctx = ToolContext(agent="alice", workdir=workdir, runtime=rt)
    assert verify_mod.run_verify(rt, task, ctx).passed  # stderr is not part of the comparison
    slow = rt.board.create("w", verify={"command": "sleep 60", "expected_stdout": ""})
    ctx.cancel.set()
    outcome = _in_thread(lambda: verify_mod.run_verify(rt, slow, ctx))
    assert not outcome.passed and "interrupted" in outcome.detail
    rt.close(WAIT)


def test_run_process_keeps_stderr_apart_only_when_asked(workdir):
    never = threading.Event()
    merged = run_process("echo out; echo err >&2", workdir, 10, never)
    assert merged.output == "out\nerr\n" and merged.stderr == ""
    split = run_process("echo out; echo err >&2", workdir, 10, never, separate_stderr=True)
    assert (split.output, split.stderr, split.code) == ("out\n", "err\n", 0)


# ---- 6. `agent-cli tasks complete` runs the verify --------------------------------------------


def _claimed_task(workdir: Path, expected: str) -> tuple[TaskBoard, int, str]:
    board = TaskBoard(workdir / ".tasks")
    task = board.create("answer", verify={"command": "echo 42", "expected_stdout": expected})
    claimed = board.claim(task.id, "bob")
    return board, task.id, claimed.claim_token


def test_tasks_complete_refuses_when_the_verify_fails(workdir, capsys):
    board, task_id, _ = _claimed_task(workdir, "43")
    code = cli.main(["-C", str(workdir), "tasks", "complete", str(task_id), "--as", "bob",
                     "--run-verify"])  # its writer is unknown: accepted explicitly
    out, err = capsys.readouterr()
    assert code == 4
    assert err.strip() == f"agent-cli: task {task_id} not completed: expected stdout '43', got '42'"
    assert "running verify: echo 42" in out
    task = board.get(task_id)
    assert task.status == "in_progress" and task.owner == "bob"


def test_tasks_complete_runs_a_passing_verify_then_completes(workdir, capsys):
    board, task_id, token = _claimed_task(workdir, "42")
    argv = ["-C", str(workdir), "tasks", "complete", str(task_id), "--as", "bob", "--token", token,
            "--run-verify"]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert "verify passed" in out and f"#{task_id} completed by bob" in out
    assert board.get(task_id).status == "completed"


def test_tasks_complete_by_someone_else_does_not_run_the_verify(workdir, capsys):
    board = TaskBoard(workdir / ".tasks")
    task = board.create("x", verify={"command": "touch ran", "expected_stdout": ""})
    board.claim(task.id, "bob")
    code = cli.main(["-C", str(workdir), "tasks", "complete", str(task.id), "--as", "eve"])
    assert code == 4 and "owned by bob" in capsys.readouterr().err
    assert not (workdir / "ran").exists()


# ---- 5. unreadable inbox files -------------------------------------------------------------------


def test_an_inbox_that_is_a_directory_is_one_line_naming_it(workdir, capsys):
    (workdir / ".team" / "inbox" / "lead.jsonl").mkdir(parents=True)
    code = cli.main(["-C", str(workdir), "inbox", "lead"])
    err = capsys.readouterr().err
    assert code == StorageError.exit_code
    assert err.count("\n") == 1 and "lead.jsonl" in err and "Traceback" not in err
    delivery = Mailbox(workdir / ".team").fetch("lead")  # a teammate's idle check goes on
    assert delivery.messages == [] and "lead.jsonl is a directory" in delivery.unusable


def test_an_unusable_cursor_is_reported_and_set_aside_not_a_crash(workdir):
    mail = Mailbox(workdir / ".team")
    mail.send("lead", "alice", "hi")
    mail.cursor_path("alice").mkdir()
    delivery = mail.fetch("alice")
    assert [m.content for m in delivery.messages] == ["hi"]
    assert any("alice.cursor is a directory" in p for p in delivery.problems)
    mail.ack("alice", delivery.cursor)
    assert mail.fetch("alice").messages == []
    assert list(mail.inbox_dir.glob("alice.cursor.corrupt-*"))[0].is_dir()  # kept, not deleted


def test_roster_and_protocol_writes_name_a_team_dir_they_cannot_create(workdir):
    from agent_cli.team.protocol import ProtocolStore
    from agent_cli.team.roster import Roster

    (workdir / "blocked").write_text("a file where the team directory should be")
    with pytest.raises(StorageError, match="blocked"):
        Roster(workdir / "blocked").add("alice", "coder")
    with pytest.raises(StorageError, match="blocked"):
        ProtocolStore(workdir / "blocked").create("shutdown", "lead", "alice")


# ---- 8. the result message fails after the task completed --------------------------------------


def test_complete_task_succeeds_with_a_note_when_the_lead_cannot_be_told(workdir):
    rt = make_runtime(workdir, ScriptedModel({"*": []}))
    task = rt.board.create("x")
    token = rt.board.claim(task.id, "alice").claim_token
    rt.mail.inbox_dir.parent.mkdir(parents=True)
    rt.mail.inbox_dir.write_text("a file where the inbox directory should be")  # sends fail

    tool = complete_task_tool()
    out = tool.run(tool.parse({"task_id": task.id, "claim_token": token, "result": "ok"}),
                   ToolContext(agent="alice", workdir=workdir, runtime=rt))
    assert not out.is_error
    assert out.content.startswith(f"task #{task.id} completed")
    assert "the result message to the lead could not be sent" in out.content
    assert rt.board.get(task.id).status == "completed"
    rt.close(WAIT)


# ---- 11. one JSON-lines reader -------------------------------------------------------------------

LINES = b'{"kind": "a", "n": 1}\nnot json\n[1, 2]\n\n{"kind": "b", "n": 2}\n{"kind": "c", "n": 3}'


def test_read_jsonl_skips_a_torn_last_line_and_names_bad_complete_lines(workdir):
    path = workdir / "log.jsonl"
    path.write_bytes(LINES)
    records, problems = read_jsonl(path)
    assert [r["n"] for r in records] == [1, 2]
    assert [str(p) for p in problems] == [
        f"{path}:2: not valid JSON",
        f"{path}:3: not a JSON object",
    ]
    _, with_torn = read_jsonl(path, report_torn=True)
    assert str(with_torn[-1]) == f"{path}:6: incomplete last line"
    assert read_jsonl(workdir / "missing.jsonl") == ([], [])
    with pytest.raises(StorageError, match="is a directory"):
        read_jsonl(workdir)


def test_the_four_readers_agree_on_a_torn_last_line(workdir):
    path = workdir / "log.jsonl"
    path.write_bytes(LINES)
    events, event_problems = read_events(path)
    assert [e["n"] for e in events] == [1, 2]
    assert [p.path for p in event_problems] == [f"{path}:2", f"{path}:3"]

    audit = AuditLog(path)
    assert [e["n"] for e in audit.entries()] == [1, 2]

    mail = Mailbox(workdir / ".team")
    mail.quarantine_path("alice").parent.mkdir(parents=True)
    mail.quarantine_path("alice").write_bytes(LINES)
    assert [r["n"] for r in mail.quarantined("alice")] == [1, 2]

    records, problems = read_records(path)
    assert [r["n"] for r in records] == [1, 2]
    assert [p.split(": ")[0] for p in problems] == [f"{path}:2", f"{path}:3", f"{path}:6"]
    assert json.loads(path.read_bytes().split(b"\n")[0])["n"] == 1  # nothing was rewritten
