"""PreToolUse / PostToolUse hooks at the tool-call boundary, with real hook scripts: matchers
(ours and Claude Code's names), exit 2 refusals, JSON decisions, a hook's allow never widening
past a deny rule, plan mode or an ask rule, results the model sees, and the audit log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.agent import results_of
from support.hooks import Hook, configure, trust_project
from support.team import Call, FakeHuman, Recorder, Reply, make_runtime

from agent_cli.models.scripted import ScriptedModel


def run_lead(workdir: Path, calls: list[Call], cleanup, **config):
    model = ScriptedModel({"lead": [Reply("working", calls), Reply("done")]})
    rt = make_runtime(workdir, model, **config)
    cleanup(rt)
    rec = Recorder(rt)
    rt.team.make_lead().run_turn("go")
    results = results_of(model.requests_for("lead")[1].messages[-1])
    return rt, rec, [r.content for r in results], [r.is_error for r in results]


def shell(cmd: str) -> Call:
    return Call("shell", {"command": cmd})


def test_exit_2_refuses_the_call_with_stderr_and_nothing_runs(
    workdir: Path, tmp_path: Path, cleanup
) -> None:
    hook = Hook(tmp_path, "pre", code=2, stderr="no touching today")
    configure(workdir, {"PreToolUse": [("Bash", hook)]})
    rt, _, texts, errors = run_lead(workdir, [shell("touch made")], cleanup,
                                    allow=["Bash(touch made)"])
    assert errors == [True] and texts == ["Refused by a PreToolUse hook: no touching today"]
    assert not (workdir / "made").exists()
    call = hook.calls()[0]
    assert call["hook_event_name"] == "PreToolUse" and call["tool_name"] == "Bash"
    assert call["tool_input"] == {"command": "touch made", "description": ""}
    assert call["tool_use_id"]
    assert call["agent"] == "lead" and call["cwd"] == str(workdir)
    assert call["session_id"] == rt.session_id
    assert call["transcript_path"].endswith(".team/transcripts/lead.jsonl")
    audit = [e for e in rt.audit.entries() if e["source"].startswith("hook")]
    assert audit and audit[0]["decision"] == "deny" and audit[0]["tool"] == "shell"
    assert audit[0]["feedback"] == "no touching today"


@pytest.mark.parametrize("matcher, runs", [
    ("", True), ("*", True), ("Bash", True), ("shell", True), ("Write|Edit", False),
    ("Read|Bash", True), ("sh.*", True), ("^write", False),
])
def test_matchers_against_our_names_and_claude_codes(
    workdir: Path, tmp_path: Path, cleanup, matcher: str, runs: bool
) -> None:
    hook = Hook(tmp_path, "pre", code=2, stderr="blocked")
    configure(workdir, {"PreToolUse": [(matcher, hook)]})
    _, _, texts, _ = run_lead(workdir, [shell("echo hi")], cleanup, allow=["Bash(echo hi)"])
    assert bool(hook.calls()) == runs
    assert (texts[0].startswith("Refused by a PreToolUse hook")) == runs


def test_a_hook_allow_runs_a_call_no_rule_allows(workdir: Path, tmp_path: Path, cleanup) -> None:
    allow = {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                    "permissionDecision": "allow"}}
    configure(workdir, {"PreToolUse": [("Bash", Hook(tmp_path, "pre", stdout=allow))]})
    rt, _, texts, errors = run_lead(workdir, [shell("echo allowed-by-hook")], cleanup)
    assert errors == [False] and "allowed-by-hook" in texts[0]  # no human was there to ask
    assert any(e["source"] == "hook" and e["decision"] == "allow" for e in rt.audit.entries())


@pytest.mark.parametrize("config, says", [
    ({"deny": ["Bash(touch *)"]}, "Denied by rule Bash(touch *)"),
    ({"permission_mode": "plan"}, "Plan mode is on"),
])
def test_a_hook_allow_never_widens_past_a_deny_rule_or_plan_mode(
    workdir: Path, tmp_path: Path, cleanup, config: dict, says: str
) -> None:
    allow = {"hookSpecificOutput": {"permissionDecision": "allow"}}
    configure(workdir, {"PreToolUse": [("", Hook(tmp_path, "pre", stdout=allow))]})
    _, _, texts, errors = run_lead(workdir, [shell("touch x")], cleanup, **config)
    assert errors == [True] and says in texts[0]
    assert not (workdir / "x").exists()


def test_a_hook_allow_does_not_skip_an_ask_rule(workdir: Path, tmp_path: Path, cleanup) -> None:
    allow = {"hookSpecificOutput": {"permissionDecision": "allow"}}
    configure(workdir, {"PreToolUse": [("", Hook(tmp_path, "pre", stdout=allow))]},
              extra={"permissions": {"ask": ["Bash(touch *)"]}})
    model = ScriptedModel({"lead": [Reply("", [shell("touch x")]), Reply("done")]})
    rt = make_runtime(workdir, model)
    cleanup(rt)
    human = FakeHuman(rt, lambda req: "deny")
    try:
        rt.team.make_lead().run_turn("go")
    finally:
        human.close()
    assert [r.summary for r in human.asked] == ["touch x"] and not (workdir / "x").exists()


def test_a_json_deny_and_a_json_ask(workdir: Path, tmp_path: Path, cleanup) -> None:
    deny = {"hookSpecificOutput": {"permissionDecision": "deny",
                                   "permissionDecisionReason": "policy says no"}}
    ask = {"hookSpecificOutput": {"permissionDecision": "ask"}}
    configure(workdir, {"PreToolUse": [("Bash", Hook(tmp_path, "deny", stdout=deny)),
                                       ("Read", Hook(tmp_path, "ask", stdout=ask))]})
    (workdir / "notes.txt").write_text("secret notes")
    model = ScriptedModel({"lead": [Reply("", [shell("echo hi"), Call("read_file",
                                                                      {"path": "notes.txt"})]),
                                    Reply("done")]})
    rt = make_runtime(workdir, model, allow=["Bash(echo hi)"])
    cleanup(rt)
    human = FakeHuman(rt, lambda req: "deny")
    try:
        rt.team.make_lead().run_turn("go")
    finally:
        human.close()
    results = results_of(model.requests_for("lead")[1].messages[-1])
    assert results[0].content == "Refused by a PreToolUse hook: policy says no"
    # ask: even a read-only tool goes to the human, who said no
    assert [r.tool for r in human.asked] == ["read_file"]
    assert results[1].is_error and "secret notes" not in results[1].content


def test_other_exit_codes_warn_and_change_nothing(workdir: Path, tmp_path: Path, cleanup) -> None:
    configure(workdir, {"PreToolUse": [("", Hook(tmp_path, "pre", code=1, stderr="crashed"))]})
    _, rec, texts, errors = run_lead(workdir, [shell("echo fine")], cleanup,
                                     allow=["Bash(echo fine)"])
    assert errors == [False] and "fine" in texts[0]
    warnings = [e.text for e in rec.of("Notice") if e.level == "warning"]
    assert any("PreToolUse hook" in w and "exit code 1: crashed" in w for w in warnings)


def test_a_hook_timeout_is_a_warning_and_the_call_goes_on(
    workdir: Path, tmp_path: Path, cleanup
) -> None:
    path = workdir / ".agent-cli" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": "sleep 30", "timeout": 0.3}]}]}}))
    trust_project(workdir)
    _, rec, texts, errors = run_lead(workdir, [shell("echo fine")], cleanup,
                                     allow=["Bash(echo fine)"])
    assert errors == [False]
    assert any("timed out after 0.3s; killed" in e.text for e in rec.of("Notice"))


def test_post_tool_use_sees_the_response_and_talks_to_the_model(
    workdir: Path, tmp_path: Path, cleanup
) -> None:
    post = {"decision": "block", "reason": "run the linter next",
            "hookSpecificOutput": {"hookEventName": "PostToolUse",
                                   "additionalContext": "file is 1 line"}}
    hook = Hook(tmp_path, "post", stdout=post)
    configure(workdir, {"PostToolUse": [("Write|Edit", hook)]})
    _, _, texts, errors = run_lead(
        workdir, [Call("write_file", {"path": "a.py", "content": "x = 1\n"})], cleanup,
        allow=["Write(a.py)"])
    assert (workdir / "a.py").read_text() == "x = 1\n"  # it ran: PostToolUse cannot undo
    assert errors == [False]
    assert texts[0].endswith("[PostToolUse hook: run the linter next]\n"
                             "[PostToolUse hook context: file is 1 line]")
    call = hook.calls()[0]
    assert call["tool_name"] == "Write" and call["tool_response"]["is_error"] is False
    assert "a.py" in call["tool_response"]["message"]
    assert call["tool_response"]["content"] == "x = 1\n"
    assert call["tool_response"]["filePath"] == str(workdir / "a.py")


def test_post_tool_use_exit_2_feeds_stderr_to_the_model(
    workdir: Path, tmp_path: Path, cleanup
) -> None:
    configure(workdir, {"PostToolUse": [("Bash", Hook(tmp_path, "post", code=2,
                                                      stderr="output looked wrong"))]})
    _, _, texts, _ = run_lead(workdir, [shell("echo hi")], cleanup, allow=["Bash(echo hi)"])
    assert texts[0].startswith("hi") and texts[0].endswith(
        "[PostToolUse hook: output looked wrong]")


def test_continue_false_refuses_and_ends_the_turn(workdir: Path, tmp_path: Path, cleanup) -> None:
    stop = {"continue": False, "stopReason": "stop everything"}
    configure(workdir, {"PreToolUse": [("", Hook(tmp_path, "pre", stdout=stop))]})
    model = ScriptedModel({"lead": [Reply("", [shell("echo a")])]})  # no second reply needed
    rt = make_runtime(workdir, model, allow=["Bash(echo a)"])
    cleanup(rt)
    result = rt.team.make_lead().run_turn("go")
    assert result.stop_reason == "idle" and len(model.requests_for("lead")) == 1


def test_a_hook_allow_never_opens_the_plan_gate(workdir: Path, tmp_path: Path, cleanup) -> None:
    allow = {"hookSpecificOutput": {"permissionDecision": "allow"}}
    hook = Hook(tmp_path, "pre", stdout=allow)
    configure(workdir, {"PreToolUse": [("", hook)]})
    model = ScriptedModel({"alice": [Reply("", [shell("touch x")]), Reply("waiting")]})
    rt = make_runtime(workdir, model)
    cleanup(rt)
    rec = Recorder(rt)
    rt.team.spawn("alice", "dev", prompt="go", require_plan=True)
    rec.wait_event("TurnFinished", agent="alice")
    result = results_of(model.requests_for("alice")[1].messages[-1])[0]
    assert result.is_error and "plan" in result.content.lower()
    assert hook.calls() and not (workdir / "x").exists()


WAITER = '''
import json, os, sys, time
event = json.load(sys.stdin)
marker = sys.argv[1]
if event["agent"] == "bob":
    open(marker, "w").close()
    sys.exit(0)
deadline = time.monotonic() + 10
while not os.path.exists(marker):  # alice's hook waits until bob's has run
    if time.monotonic() > deadline:
        print("bob's hook never ran while mine waited", file=sys.stderr)
        sys.exit(2)
    time.sleep(0.02)
'''


def test_hooks_of_two_teammates_run_at_the_same_time(workdir: Path, tmp_path: Path,
                                                     cleanup) -> None:
    import shlex
    import sys

    script = tmp_path / "waiter.py"
    script.write_text(WAITER)
    command = f"{shlex.quote(sys.executable)} {script} {tmp_path / 'bob-ran'}"
    (workdir / ".agent-cli").mkdir()
    (workdir / ".agent-cli" / "settings.json").write_text(json.dumps({"hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
                                                      "command": command}]}]}}))
    trust_project(workdir)
    model = ScriptedModel({"alice": [Reply("", [shell("echo alice")]), Reply("done")],
                           "bob": [Reply("", [shell("echo bob")]), Reply("done")]})
    rt = make_runtime(workdir, model, allow=["Bash(echo alice)", "Bash(echo bob)"])
    cleanup(rt)
    rec = Recorder(rt)
    rt.team.spawn("alice", "dev", prompt="go")
    rec.wait_event("ToolStarted", agent="alice")  # alice's hook is (about to be) waiting
    rt.team.spawn("bob", "dev", prompt="go")
    rec.wait_event("TurnFinished", agent="alice")
    rec.wait_event("TurnFinished", agent="bob")
    for name in ("alice", "bob"):
        result = results_of(model.requests_for(name)[1].messages[-1])[0]
        assert not result.is_error and result.content.startswith(name), result.content


def test_pre_tool_use_context_reaches_the_model_with_the_result(
    workdir: Path, tmp_path: Path, cleanup
) -> None:
    say = {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                  "additionalContext": "prod is frozen today"}}
    configure(workdir, {"PreToolUse": [("Bash", Hook(tmp_path, "pre", stdout=say))]})
    _, _, texts, errors = run_lead(workdir, [shell("echo hi")], cleanup, allow=["Bash(echo hi)"])
    assert errors == [False]
    assert texts[0].startswith("hi") and texts[0].endswith(
        "[PreToolUse hook context: prod is frozen today]")
