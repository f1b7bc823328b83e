"""Nothing a model wrote runs without the gate: a `verify` command from create_task, on every
path that runs it -- a teammate's complete_task (its gate: a human, or headless denial) and
`agent-cli tasks complete` (a [y/N] question on a terminal, refusal without one unless
--run-verify). The verify command here would create `ran.txt`; whether that file exists is
what the tests check, with the audit line naming who wrote the command.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pexpect
from support.team import WAIT, FakeHuman, Recorder, Reply, complete_claimed, make_runtime

from agent_cli.agent.tool_calls import ToolRunner
from agent_cli.app import open_runtime
from agent_cli.board import TaskBoard
from agent_cli.models.base import ToolUseBlock
from agent_cli.models.scripted import ScriptedModel
from agent_cli.permissions.audit import AuditLog
from agent_cli.runtime import RuntimeConfig
from agent_cli.team.board_tools import lead_board_tools
from agent_cli.tools.base import ToolContext, ToolSet

VERIFY = "touch ran.txt && echo ok"
SRC = str(Path(__file__).resolve().parents[2])


def _model_writes_a_task(workdir: Path, forged: str | None = None) -> int:
    """The lead's model calls create_task with a verify (maybe claiming set_by itself)."""
    rt = open_runtime(workdir, RuntimeConfig())
    runner = ToolRunner("lead", ToolSet(lead_board_tools(rt.team)), rt.gate, lambda e: None,
                        lambda: ToolContext("lead", workdir))
    verify: dict = {"command": VERIFY, "expected_stdout": "ok"}
    if forged:
        verify["set_by"] = forged
    out = runner.run_one(ToolUseBlock(id="t", name="create_task",
                                      input={"subject": "build it", "verify": verify}))
    assert not out.is_error, out.content
    task = rt.board.snapshot().tasks[-1]
    rt.close(timeout=5)
    return task.id


def _claim(workdir: Path, task_id: int, owner: str = "bob") -> None:
    TaskBoard(workdir / ".tasks").claim(task_id, owner)


def _verify_lines(workdir: Path) -> list[dict]:
    return [e for e in AuditLog(workdir / ".team" / "audit.jsonl").entries()
            if e["tool"] == "verify"]


def _cli(workdir: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run(
        [sys.executable, "-m", "agent_cli", "-C", str(workdir), "tasks", *args],
        input=stdin, capture_output=True, text=True, timeout=60, env=env,
    )


def test_the_model_cannot_claim_someone_else_wrote_its_verify(workdir):
    task_id = _model_writes_a_task(workdir, forged="cli")
    stored = json.loads((workdir / ".tasks" / f"task_{task_id}.json").read_text())
    assert stored["verify"]["set_by"] == "lead"


def test_without_a_terminal_the_cli_refuses_and_names_run_verify(workdir):
    task_id = _model_writes_a_task(workdir)
    _claim(workdir, task_id)
    run = _cli(workdir, "complete", str(task_id), "--as", "bob")
    assert run.returncode == 4
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "--run-verify" in lines[0] and VERIFY in lines[0], run.stderr
    assert "written by lead" in lines[0]
    assert not (workdir / "ran.txt").exists()
    assert TaskBoard(workdir / ".tasks").get(task_id).status == "in_progress"
    [line] = _verify_lines(workdir)
    assert (line["decision"], line["verify_set_by"], line["agent"]) == ("deny", "lead", "cli")


def test_run_verify_accepts_it_and_the_run_is_audited(workdir):
    task_id = _model_writes_a_task(workdir)
    _claim(workdir, task_id)
    run = _cli(workdir, "complete", str(task_id), "--as", "bob", "--run-verify")
    assert run.returncode == 0, run.stderr
    assert (workdir / "ran.txt").exists()
    assert TaskBoard(workdir / ".tasks").get(task_id).status == "completed"
    [line] = _verify_lines(workdir)
    assert (line["decision"], line["source"], line["verify_set_by"]) == (
        "allow", "--run-verify", "lead")
    assert line["input"] == {"task_id": task_id, "command": VERIFY}


def _spawn_complete(workdir: Path, task_id: int) -> pexpect.spawn:
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return pexpect.spawn(
        sys.executable,
        ["-m", "agent_cli", "-C", str(workdir), "tasks", "complete", str(task_id), "--as", "bob"],
        env=env, encoding="utf-8", timeout=30,
    )


def test_on_a_terminal_it_shows_the_exact_command_and_no_keeps_it_from_running(workdir):
    task_id = _model_writes_a_task(workdir)
    _claim(workdir, task_id)
    child = _spawn_complete(workdir, task_id)
    child.expect("written by lead")
    child.expect_exact(VERIFY)
    child.expect_exact("[y/N]")
    child.sendline("")  # Enter alone is no
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 4
    assert not (workdir / "ran.txt").exists()
    assert _verify_lines(workdir)[-1]["decision"] == "deny"


def test_on_a_terminal_yes_runs_it_and_completes(workdir):
    task_id = _model_writes_a_task(workdir)
    _claim(workdir, task_id)
    child = _spawn_complete(workdir, task_id)
    child.expect_exact("[y/N]")
    child.sendline("y")
    child.expect("verify passed")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert (workdir / "ran.txt").exists()
    line = _verify_lines(workdir)[-1]
    assert (line["decision"], line["source"], line["verify_set_by"]) == (
        "allow", "terminal", "lead")


def test_a_verify_typed_at_the_command_line_runs_as_typed_and_is_audited(workdir):
    run = _cli(workdir, "add", "mine", "--verify-command", VERIFY, "--expect-stdout", "ok")
    assert run.returncode == 0, run.stderr
    _claim(workdir, 1)
    run = _cli(workdir, "complete", "1", "--as", "bob")
    assert run.returncode == 0, run.stderr
    assert (workdir / "ran.txt").exists()
    line = _verify_lines(workdir)[-1]
    assert (line["source"], line["verify_set_by"]) == ("set by cli", "cli")


def test_an_old_task_file_without_set_by_is_readable_and_treated_as_unknown(workdir):
    tasks = workdir / ".tasks"
    tasks.mkdir()
    (tasks / "task_1.json").write_text(json.dumps({
        "id": 1, "subject": "old", "description": "", "status": "pending", "owner": None,
        "blockedBy": [], "created_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-01T00:00:00Z", "verify": {"command": VERIFY, "expected_stdout": "ok",
                                    "expected_stdout_file": None, "expected_exit_code": 0},
    }))
    board = TaskBoard(tasks)
    assert board.get(1).verify.set_by is None  # still readable
    _claim(workdir, 1)
    run = _cli(workdir, "complete", "1", "--as", "bob")
    assert run.returncode == 4 and "unknown writer" in run.stderr
    assert not (workdir / "ran.txt").exists()
    assert _verify_lines(workdir)[-1]["verify_set_by"] == "unknown"


def test_a_teammate_completing_headless_never_runs_a_model_written_verify(workdir, cleanup):
    model = ScriptedModel({"alice": [complete_claimed("built"), Reply(text="cannot finish")]})
    rt = make_runtime(workdir, model)
    cleanup(rt)
    rec = Recorder(rt)
    task = rt.board.create("build it", verify={"command": VERIFY, "expected_stdout": "ok",
                                               "set_by": "lead"})
    rt.team.spawn("alice", "builder")  # no UI attached: every ask is denied (headless)
    failed = rec.wait_event("TaskEvent", action="verify_failed", task_id=task.id)
    assert "verify command was not run" in failed.detail
    assert rt.team.wait_quiet(WAIT)
    assert not (workdir / "ran.txt").exists()
    assert rt.board.get(task.id).status == "in_progress"
    line = _verify_lines(workdir)[-1]
    assert (line["agent"], line["decision"], line["verify_set_by"]) == ("alice", "deny", "lead")


def test_a_teammate_verify_asks_the_human_who_sees_who_wrote_it(workdir, cleanup):
    model = ScriptedModel({"alice": [complete_claimed("built"), Reply(text="done")]})
    rt = make_runtime(workdir, model)
    cleanup(rt)
    rec = Recorder(rt)
    human = FakeHuman(rt, lambda req: "allow_once")
    task = rt.board.create("build it", verify={"command": VERIFY, "expected_stdout": "ok",
                                               "set_by": "lead"})
    rt.team.spawn("alice", "builder")
    rec.wait_event("TaskEvent", action="completed", task_id=task.id)
    assert [(r.summary, r.purpose) for r in human.asked] == [
        (VERIFY, f"task #{task.id} verify, written by lead")]
    assert (workdir / "ran.txt").exists()
    line = _verify_lines(workdir)[-1]
    assert (line["agent"], line["decision"], line["source"], line["verify_set_by"]) == (
        "alice", "allow", "human", "lead")
    assert rt.team.wait_quiet(WAIT)
    human.close()
