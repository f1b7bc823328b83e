"""`-p --wait` waits for teammates running in other processes (`agent-cli teammate`) that
can take the run's tasks, and only for those: a task no live member may claim does not
keep the run until its timeout."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

from support.cli import cli_env
from support.teammate_proc import WAIT, TeammateProcess, events

WRITE = 'Write "hello from another process" to notes.txt.'


def _run_lead(workdir: Path, task: dict) -> tuple[int, dict, str]:
    """`-p --wait` whose scripted lead creates `task`; (exit code, JSON report, stderr)."""
    script = workdir.parent / "lead.json"
    script.write_text(json.dumps({"lead": [
        {"text": "One task.", "tool_calls": [{"name": "create_task", "input": task}]},
        *[{"text": "Noted."}] * 9]}))
    proc = subprocess.run(
        [sys.executable, "-m", "agent_cli", "-C", str(workdir), "--model", f"script:{script}",
         "-p", "Plan the work", "--wait", "--timeout", "120", "--output-format", "json"],
        env=cli_env(), capture_output=True, text=True, timeout=WAIT * 3)
    return proc.returncode, json.loads(proc.stdout), proc.stderr


def _alice(workdir: Path) -> TeammateProcess:
    alice = TeammateProcess(workdir, "alice", "--model", "demo",
                            "--permission-mode", "acceptEdits")
    alice.wait_line("joined team default")
    return alice


def _stop(alice: TeammateProcess) -> None:
    alice.signal(signal.SIGTERM)
    alice.wait()


def test_the_run_waits_until_a_teammate_process_completes_its_task(workdir):
    alice = _alice(workdir)
    try:
        code, report, err = _run_lead(workdir, {"subject": "notes", "description": WRITE})
        assert code == 0, err
        assert report["outcome"] == "completed"
        assert (workdir / "notes.txt").read_text() == "hello from another process\n"
        assert [e for e in events(workdir, 1) if e[0] != "created"] == [
            ("claimed", "alice"), ("completed", "alice")]
        assert alice.count("completed #1") == 1
    finally:
        _stop(alice)


def test_a_task_no_live_member_may_claim_ends_the_run_unfinished_not_timed_out(workdir):
    alice = _alice(workdir)
    try:
        code, report, err = _run_lead(workdir, {"subject": "deploy", "description": WRITE,
                                                "role": "ops"})
        assert code == 1
        assert report["outcome"] == "unfinished" and "timed_out" not in report
        assert "agent-cli: unfinished #1 \"deploy\" (pending)" in err
        assert not (workdir / "notes.txt").exists()
        assert alice.count("claimed #1") == 0
    finally:
        _stop(alice)
