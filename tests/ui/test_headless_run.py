"""Headless `agent-cli -p`: run as a real process with a scripted model; JSON and text output,
denials reported, a timeout exits non-zero naming what still ran, the team shut down."""

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

SCRIPT = {
    "lead": [
        {"text": "Planning.", "tool_calls": [
            {"name": "create_task", "input": {"subject": "say hello"}},
            {"name": "spawn_teammate", "input": {"name": "alice", "role": "tester"}}]},
        {"text": "Task 1 is planned; alice takes it."},
        # --wait: alice's report (her command was denied) reaches the lead once she is idle
        {"text": "alice could not run her command: it needs an allow rule."},
    ],
    "alice": [
        {"text": "Running.", "tool_calls": [
            {"name": "shell", "input": {"command": "echo hello-from-alice"}}]},
        {"text": "Ran it."},
    ],
}


def run_cli(
    workdir: Path, script: dict, *args: str, timeout: float = 60
) -> subprocess.CompletedProcess:
    path = workdir.parent / "script.json"
    path.write_text(json.dumps(script), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC")}
    return subprocess.run(
        [sys.executable, "-m", "agent_cli", "--model", f"script:{path}", "-C", str(workdir),
         *args],
        capture_output=True, text=True, timeout=timeout, env=env,
    )


def test_wait_json_returns_board_team_usage_and_denials(workdir: Path) -> None:
    proc = run_cli(workdir, SCRIPT, "-p", "plan it", "--wait", "--timeout", "30",
                   "--output-format", "json")
    assert proc.returncode == 1, proc.stderr  # the task is not done: an honest failure
    report = json.loads(proc.stdout)
    # The lead heard back from alice (a second turn, opened by its inbox) before the end.
    assert [t["text"] for t in report["lead_turns"]] == [
        "Task 1 is planned; alice takes it.",
        "alice could not run her command: it needs an allow rule."]
    assert report["result"] == "alice could not run her command: it needs an allow rule."
    transcript = _session_lead(workdir).read_text(encoding="utf-8")
    assert 'from=\\"alice\\" type=\\"message\\"' in transcript
    assert [t["subject"] for t in report["tasks"]] == ["say hello"]
    # the board as the run left it: the shutdown released alice's task
    assert (report["tasks"][0]["status"], report["tasks"][0]["owner"]) == ("pending", None)
    assert report["outcome"] == "unfinished"
    [undone] = report["unfinished"]
    assert (undone["id"], undone["status"], undone["owner"]) == (1, "pending", "alice")
    assert undone["reason"] == (  # whole, and saying what a headless user can do
        "shell run was denied (no human was available to approve this shell command "
        "(echo hello-from-alice); this run is headless. To let it run, rerun with --allow "
        "'Bash(echo hello-from-alice)'.)")
    [line] = [x for x in proc.stderr.splitlines() if x.startswith("agent-cli:")]
    assert line.startswith('agent-cli: unfinished #1 "say hello" (pending, alice): shell run')
    assert [m["name"] for m in report["team"]] == ["alice"]
    assert report["usage"]["total_tokens"] >= report["usage"]["lead"]["total_tokens"] > 0
    # Nobody could approve alice's command: denied and reported with the rule that allows it.
    assert report["denials"] == [{"agent": "alice", "tool": "shell",
                                  "target": "echo hello-from-alice",
                                  "rule": "Bash(echo hello-from-alice)", "purpose": ""}]


def test_allow_rule_lets_the_command_run(workdir: Path) -> None:
    script = dict(SCRIPT)
    script["lead"] = [*SCRIPT["lead"][:2], {"text": "alice ran it but never completed #1."}]
    script["alice"] = [*SCRIPT["alice"], {"text": "Ran it, yes."}, {"text": "It printed it."}]
    proc = run_cli(workdir, script, "-p", "plan it", "--wait", "--timeout", "30",
                   "--allow", "Bash(echo hello-from-alice)")
    # alice ran the command, then forgot complete_task through both reminders
    assert proc.returncode == 1, proc.stderr
    assert "Task 1 is planned" in proc.stdout
    assert "alice ran it but never completed #1." in proc.stdout
    assert "#1 [pending] say hello" in proc.stdout
    assert "outcome: unfinished" in proc.stdout
    assert 'unfinished #1 "say hello" (pending, alice): alice ended 3 turns' in proc.stdout
    assert "denied" not in proc.stderr
    assert proc.stderr.count("agent-cli: unfinished #1") == 1
    audit = (workdir / ".team" / "audit.jsonl").read_text(encoding="utf-8")
    assert "hello-from-alice" in audit


def test_timeout_exits_non_zero_and_says_what_still_runs(workdir: Path) -> None:
    slow = dict(SCRIPT)
    slow["alice"] = [
        {"text": "Waiting.", "tool_calls": [{"name": "shell", "input": {"command": "sleep 20"}}]},
        {"text": "Done."},
    ]
    proc = run_cli(workdir, slow, "-p", "plan it", "--wait", "--timeout", "2",
                   "--allow", "Bash(sleep 20)", "--output-format", "json")
    assert proc.returncode == 1
    assert "timed out after 2s; still running: alice" in proc.stderr
    report = json.loads(proc.stdout)
    assert report["timed_out"] is True and report["still_running"][0].startswith("alice")


def test_without_wait_prints_the_lead_text_only(workdir: Path) -> None:
    script = {"lead": [{"text": "Just **one** answer."}]}
    proc = run_cli(workdir, script, "-p", "hi")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "Just **one** answer."


def _session_lead(workdir: Path) -> Path:
    """The lead's transcript of the one session the run made (.team/transcripts/sessions/)."""
    [path] = (workdir / ".team" / "transcripts" / "sessions").glob("*/lead.jsonl")
    return path


def run_cli_script(workdir: Path, script: dict | None, *args: str) -> subprocess.CompletedProcess:
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
    proc = run_cli_script(workdir, {"lead": []}, "-p", "hello")
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    [line] = lines(proc.stderr)
    assert line.startswith("agent-cli: lead model error (script_exhausted): ")
    assert "no response left for agent 'lead'" in line


def test_a_lead_model_error_is_in_the_json_with_its_kind(workdir: Path) -> None:
    # a model that never recovers: every one of the 8 attempts fails
    script = {"lead": [{"error": "connection", "message": "cannot reach the model API"}] * 8}
    proc = run_cli_script(workdir, script, "-p", "hello", "--output-format", "json")
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
    proc = run_cli_script(workdir, script, "-p", "build", "--wait", "--timeout", "30",
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
    proc = run_cli_script(workdir, {"lead": [{"text": "Hi."}]}, "-p", "hello", "--output-format",
                   "json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert "error" not in report and report["teammate_errors"] == []
    assert proc.stderr == ""


@pytest.mark.parametrize("prompt", ["", "   ", "\n\t"])
def test_a_blank_prompt_is_refused_before_anything_starts(workdir: Path, prompt: str) -> None:
    proc = run_cli_script(workdir, {"lead": [{"text": "never asked"}]}, "-p", prompt)
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
