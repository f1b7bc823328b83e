"""Command-line options: numbers that make no sense are one usage error, and the compaction
threshold can be set from the command line or the environment (and really makes a run
compact)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.cli import cli_env

from agent_cli.cli import build_parser, main, runtime_config
from agent_cli.errors import UserError


@pytest.mark.parametrize(("option", "value", "why"), [
    ("--timeout", "-1", "above 0"),
    ("--timeout", "0", "above 0"),
    ("--timeout", "nan", "not a finite number"),
    ("--timeout", "inf", "not a finite number"),
    ("--timeout", "soon", "not a number"),
    ("--idle-timeout", "-5", "0 (never) or a positive"),
    ("--idle-timeout", "nan", "not a finite number"),
    ("--compact-at", "0", "above 0"),
    ("--compact-at", "-3", "above 0"),
    ("--compact-at", "1.5", "not a whole number"),
])
def test_a_nonsense_number_is_one_usage_error(workdir, capsys, option, value, why) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["-C", str(workdir), "--model", "demo", "-p", "hi", f"{option}={value}"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    [error] = [x for x in err.splitlines() if "error:" in x]
    assert error.startswith(f"agent-cli: error: argument {option}: ")
    assert why in error
    assert not (workdir / ".team").exists()  # nothing started


def test_sensible_numbers_reach_the_runtime_config() -> None:
    args = build_parser().parse_args(
        ["--timeout", "2.5", "--idle-timeout", "0", "--compact-at", "50_000"])
    assert args.timeout == 2.5
    config = runtime_config(args)
    assert config.idle_timeout_s == 0  # 0 = never
    assert config.compact_threshold_tokens == 50_000


def test_compact_at_comes_from_the_environment_unless_given(monkeypatch) -> None:
    monkeypatch.setenv("AGENT_CLI_COMPACT_AT", "1234")
    assert runtime_config(build_parser().parse_args([])).compact_threshold_tokens == 1234
    flag = build_parser().parse_args(["--compact-at", "99"])
    assert runtime_config(flag).compact_threshold_tokens == 99
    monkeypatch.setenv("AGENT_CLI_COMPACT_AT", "lots")
    with pytest.raises(UserError, match="AGENT_CLI_COMPACT_AT: 'lots' is not a whole number"):
        runtime_config(build_parser().parse_args([]))
    monkeypatch.delenv("AGENT_CLI_COMPACT_AT")
    assert runtime_config(build_parser().parse_args([])).compact_threshold_tokens is None  # share


LEAD_SCRIPT = {"lead": [
    {"text": "Looking.", "tool_calls": [{"name": "list_tasks", "input": {}}]},
    {"text": "Again.", "tool_calls": [{"name": "list_tasks", "input": {}}]},
    {"text": "Summary: the board is empty; the lead looked twice."},  # the compaction
    {"text": "The board is empty."},
]}


@pytest.mark.parametrize("how", ["flag", "env"])
def test_a_tiny_threshold_makes_a_headless_run_compact(workdir: Path, how: str) -> None:
    script = workdir.parent / "script.json"
    script.write_text(json.dumps(LEAD_SCRIPT), encoding="utf-8")
    cmd = [sys.executable, "-m", "agent_cli", "-C", str(workdir), "--model", f"script:{script}",
           "-p", "what is on the board?", "--output-format", "json"]
    extra = {"AGENT_CLI_COMPACT_AT": "1"} if how == "env" else {}
    if how == "flag":
        cmd += ["--compact-at", "1"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=cli_env(**extra))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["result"] == "The board is empty."
    transcript = _session_lead(workdir)
    records = [json.loads(x) for x in transcript.read_text(encoding="utf-8").splitlines()]
    [compaction] = [r for r in records if r["kind"] == "compaction"]
    assert compaction["summary"] == "Summary: the board is empty; the lead looked twice."
    assert compaction["reason"] == "auto"


def test_without_a_threshold_the_same_run_does_not_compact(workdir: Path) -> None:
    script = workdir.parent / "script.json"
    plain = {"lead": [e for e in LEAD_SCRIPT["lead"] if not e["text"].startswith("Summary")]}
    script.write_text(json.dumps(plain), encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "agent_cli", "-C", str(workdir), "--model", f"script:{script}",
         "-p", "what is on the board?"],
        capture_output=True, text=True, timeout=60, env=cli_env(),
    )
    assert proc.returncode == 0, proc.stderr
    transcript = _session_lead(workdir)
    assert '"compaction"' not in transcript.read_text(encoding="utf-8")


def _session_lead(workdir: Path) -> Path:
    """The lead's transcript of the one session the run made (.team/transcripts/sessions/)."""
    [path] = (workdir / ".team" / "transcripts" / "sessions").glob("*/lead.jsonl")
    return path
