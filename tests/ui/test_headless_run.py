"""Headless `agent-cli -p`: run as a real process with a scripted model; JSON and text output,
denials reported, a timeout exits non-zero naming what still ran, the team shut down."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

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
    assert undone["reason"].startswith("shell run was denied")
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
