"""Headless failures say what failed: a lead model error is one line on stderr and an "error"
object in the JSON; a teammate that fails during --wait is reported too; a blank -p prompt is
refused before anything starts. Run as real processes with a scripted model."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from argparse import Namespace
from pathlib import Path

import pytest
from support.team import Reply, make_runtime

from agent_cli.errors import UserError
from agent_cli.models.scripted import ScriptedModel
from agent_cli.ui.headless import run_headless


def run_cli(workdir: Path, script: dict | None, *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "agent_cli", "-C", str(workdir)]
    if script is not None:
        path = workdir.parent / "script.json"
        path.write_text(json.dumps(script), encoding="utf-8")
        cmd += ["--model", f"script:{path}"]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC", "AGENT_CLI_M"))}
    return subprocess.run([*cmd, *args], capture_output=True, text=True, timeout=60, env=env)


def lines(text: str) -> list[str]:
    return [x for x in text.splitlines() if x.strip()]


def test_a_lead_whose_script_runs_dry_says_so_on_stderr(workdir: Path) -> None:
    proc = run_cli(workdir, {"lead": []}, "-p", "hello")
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    [line] = lines(proc.stderr)
    assert line.startswith("agent-cli: lead model error (script_exhausted): ")
    assert "no response left for agent 'lead'" in line


def test_a_lead_model_error_is_in_the_json_with_its_kind(workdir: Path) -> None:
    # a model that never recovers: every one of the 8 attempts fails
    script = {"lead": [{"error": "connection", "message": "cannot reach the model API"}] * 8}
    proc = run_cli(workdir, script, "-p", "hello", "--output-format", "json")
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    assert report["stop_reason"] == "error"
    assert report["error"]["kind"] == "connection"
    assert "cannot reach the model API" in report["error"]["message"]
    assert report["teammate_errors"] == []
    [line] = lines(proc.stderr)
    assert line.startswith("agent-cli: lead model error (connection): ")


def test_a_teammate_failing_during_wait_is_reported_and_fails_the_run(workdir: Path) -> None:
    script = {
        "lead": [
            {"tool_calls": [
                {"name": "create_task", "input": {"subject": "build it"}},
                {"name": "spawn_teammate", "input": {"name": "alice", "role": "coder"}}]},
            {"text": "alice is on it."},
            {"text": "alice failed; task 1 is back on the board."},  # her error reaches me
        ],
        "alice": [{"error": "overloaded", "message": "the API is overloaded"}] * 8,
    }
    proc = run_cli(workdir, script, "-p", "build", "--wait", "--timeout", "30",
                   "--output-format", "json")
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    assert "error" not in report  # the lead itself is fine
    assert report["result"] == "alice failed; task 1 is back on the board."
    [failure] = report["teammate_errors"]
    assert failure["agent"] == "alice"
    assert failure["message"].startswith("alice failed: model error (overloaded)")
    assert "task #1 released to pending" in failure["message"]
    assert report["tasks"][0]["status"] == "pending"
    assert [m["status"] for m in report["team"]] == ["failed"]
    assert report["outcome"] == "unfinished"
    [undone] = report["unfinished"]
    assert (undone["id"], undone["status"], undone["owner"]) == (1, "pending", None)
    assert undone["reason"].startswith("alice failed: model error (overloaded)")
    failed, unfinished = lines(proc.stderr)
    assert failed.startswith("agent-cli: teammate alice failed: model error (overloaded)")
    assert unfinished.startswith('agent-cli: unfinished #1 "build it" (pending): alice failed')


def test_a_successful_run_reports_no_errors(workdir: Path) -> None:
    proc = run_cli(workdir, {"lead": [{"text": "Hi."}]}, "-p", "hello", "--output-format",
                   "json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert "error" not in report and report["teammate_errors"] == []
    assert proc.stderr == ""


@pytest.mark.parametrize("prompt", ["", "   ", "\n\t"])
def test_a_blank_prompt_is_refused_before_anything_starts(workdir: Path, prompt: str) -> None:
    proc = run_cli(workdir, {"lead": [{"text": "never asked"}]}, "-p", prompt)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert lines(proc.stderr) == ["agent-cli: -p needs a prompt: the one given is empty"]
    assert sorted(p.name for p in workdir.iterdir()) == []  # no .team/, no .tasks/


def test_run_headless_refuses_a_blank_prompt_without_a_model_call(workdir: Path) -> None:
    model = ScriptedModel({"lead": [Reply(text="never asked")]})
    rt = make_runtime(workdir, model)
    args = Namespace(prompt="  ", wait=False, timeout=5.0, output_format="text")
    with pytest.raises(UserError, match="empty"):
        run_headless(rt, args, out=io.StringIO(), err=io.StringIO())
    assert model.requests == []
