"""The lead's session hooks with real scripts: UserPromptSubmit (exit 2 drops the prompt, context
is added), Stop (a block makes the lead go on, bounded), SessionStart context in the first turn,
SessionEnd at the end of a headless run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from support.hooks import Hook, configure
from support.team import Recorder, Reply, make_runtime

from agent_cli.models.base import ModelRequest
from agent_cli.models.scripted import ScriptedModel
from agent_cli.team.lead_hooks import MAX_STOP_BLOCKS
from agent_cli.ui.lead import LeadRunner

WAIT = 10.0


def runner(workdir: Path, model: ScriptedModel, cleanup):
    from agent_cli.team.lead_hooks import LeadHooks

    rt = make_runtime(workdir, model)
    cleanup(rt)
    hooks = LeadHooks(rt)
    return rt, hooks, LeadRunner(rt, rt.team.make_lead(), hooks=hooks)


def test_user_prompt_submit_exit_2_drops_the_prompt(workdir: Path, tmp_path: Path,
                                                    cleanup) -> None:
    hook = Hook(tmp_path, "prompt", code=2, stderr="no secrets in prompts")
    configure(workdir, {"UserPromptSubmit": [("", hook)]})
    model = ScriptedModel({"lead": []})  # the model must never be asked
    rt, _, lead = runner(workdir, model, cleanup)
    rec = Recorder(rt)
    lead.submit("my password is hunter2")
    assert lead.wait_idle(WAIT)
    assert model.requests == []
    assert any(e.text == "prompt not sent: a UserPromptSubmit hook blocked it: no secrets in "
               "prompts" for e in rec.of("Notice"))
    assert hook.calls()[0]["prompt"] == "my password is hunter2"
    assert hook.calls()[0]["hook_event_name"] == "UserPromptSubmit"


def test_user_prompt_submit_context_is_added_below_the_prompt(workdir: Path, tmp_path: Path,
                                                              cleanup) -> None:
    configure(workdir, {"UserPromptSubmit": [
        ("", Hook(tmp_path, "a", stdout="branch: main")),
        ("", Hook(tmp_path, "b", stdout={"hookSpecificOutput": {
            "hookEventName": "UserPromptSubmit", "additionalContext": "tests: green"}}))]})
    model = ScriptedModel({"lead": [Reply("ok")]})
    _, _, lead = runner(workdir, model, cleanup)
    lead.submit("status?")
    assert lead.wait_idle(WAIT)
    text = model.requests_for("lead")[0].messages[-1].text()
    assert text.startswith("status?") and "branch: main\ntests: green" in text


def test_a_stop_hook_block_makes_the_lead_go_on(workdir: Path, tmp_path: Path, cleanup) -> None:
    ready = tmp_path / "ready"
    hook = Hook(tmp_path, "stop", stdout={"decision": "block", "reason": "tests not run yet"},
                pass_if=ready)
    configure(workdir, {"Stop": [("", hook)]})

    def again(request: ModelRequest) -> Reply:
        assert "tests not run yet" in request.messages[-1].text()
        ready.touch()
        return Reply("ran the tests")

    model = ScriptedModel({"lead": [Reply("all done"), again]})
    _, _, lead = runner(workdir, model, cleanup)
    lead.submit("finish")
    assert lead.wait_idle(WAIT)
    assert lead.last_result.text == "ran the tests"
    calls = hook.calls()
    assert [c["stop_hook_active"] for c in calls] == [False, True]
    assert calls[0]["last_assistant_message"] == "all done"


def test_a_stop_hook_that_always_blocks_is_bounded(workdir: Path, tmp_path: Path,
                                                   cleanup) -> None:
    configure(workdir, {"Stop": [("", Hook(tmp_path, "stop", code=2, stderr="more"))]})
    model = ScriptedModel({"lead": [Reply("turn")] * (MAX_STOP_BLOCKS + 1)})
    rt, _, lead = runner(workdir, model, cleanup)
    rec = Recorder(rt)
    lead.submit("go")
    assert lead.wait_idle(WAIT)
    assert len(model.requests_for("lead")) == MAX_STOP_BLOCKS + 1
    assert any("in a row" in e.text for e in rec.of("Notice"))


def test_session_start_context_opens_the_first_turn(workdir: Path, tmp_path: Path,
                                                    cleanup) -> None:
    hook = Hook(tmp_path, "start", stdout="sprint goal: ship v2")
    configure(workdir, {"SessionStart": [("startup", hook)]})
    model = ScriptedModel({"lead": [Reply("ok"), Reply("ok again")]})
    _, hooks, lead = runner(workdir, model, cleanup)
    hooks.session_start("startup")
    lead.submit("hello")
    assert lead.wait_idle(WAIT)
    lead.submit("again")
    assert lead.wait_idle(WAIT)
    first, second = model.requests_for("lead")
    assert "sprint goal: ship v2" in first.messages[0].text()
    assert second.messages[-1].text() == "again"  # only once
    assert hook.calls()[0]["source"] == "startup"


def test_headless_runs_session_start_and_end(workdir: Path, tmp_path: Path) -> None:
    start, end = Hook(tmp_path, "start"), Hook(tmp_path, "end")
    configure(workdir, {"SessionStart": [("", start)], "SessionEnd": [("", end)]})
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"lead": [{"text": "hi"}]}))
    proc = subprocess.run([sys.executable, "-m", "agent_cli", "--model", f"script:{script}",
                           "-C", str(workdir), "-p", "hello"], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert start.calls()[0]["hook_event_name"] == "SessionStart"
    assert end.calls()[0]["reason"] == "other"
    assert start.calls()[0]["session_id"] == end.calls()[0]["session_id"]
    [lead] = (workdir / ".team" / "transcripts" / "sessions").glob("*/lead.jsonl")
    assert start.calls()[0]["session_id"] == lead.parent.name  # agent-cli's own session
    assert start.calls()[0]["transcript_path"] == str(lead)


def test_headless_prompt_blocked_by_a_hook_never_reaches_the_model(workdir: Path,
                                                                   tmp_path: Path) -> None:
    configure(workdir, {"UserPromptSubmit": [("", Hook(tmp_path, "p", code=2,
                                                       stderr="no deploys on friday"))]})
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"lead": []}))  # any model request would fail the run
    proc = subprocess.run([sys.executable, "-m", "agent_cli", "--model", f"script:{script}",
                           "-C", str(workdir), "-p", "deploy now", "--output-format", "json"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    assert report["stop_reason"] == "prompt_blocked" and report["lead_turns"] == []
    assert "blocked by a UserPromptSubmit hook" in proc.stderr
    assert "error" not in report


def test_session_start_says_resume_for_a_continued_session(workdir: Path, tmp_path: Path) -> None:
    start = Hook(tmp_path, "start")
    configure(workdir, {"SessionStart": [("", start)]})
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"lead": [{"text": "one"}, {"text": "two"}]}))
    for extra in ([], ["-c"]):
        proc = subprocess.run([sys.executable, "-m", "agent_cli", "--model", f"script:{script}",
                               "-C", str(workdir), *extra, "-p", "hello"],
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
    assert [c["source"] for c in start.calls()] == ["startup", "resume"]
