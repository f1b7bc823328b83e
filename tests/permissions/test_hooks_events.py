"""Claude Code's other hook events where agent-cli has the moment: PermissionRequest answers
for the human (never past an ask rule), Notification when an approval waits or the team went
idle, PreCompact, SubagentStart / SubagentStop around a teammate's turn, SessionEnd and
SessionStart on /clear, and prompt-type hooks named once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.agent import make_agent
from support.hooks import Hook, configure
from support.team import Call, FakeHuman, Recorder, Reply, make_runtime

from agent_cli.agent import AgentSettings
from agent_cli.models.scripted import ScriptedModel
from agent_cli.permissions.hooks import HookRunner, HookSpec
from agent_cli.team.lead_hooks import LeadHooks


def tool_rounds(n: int) -> list[Reply]:
    return [Reply(f"step {i}", [Call("echo", {"text": "x"})]) for i in range(n)]


def decision(behavior: str, message: str = "") -> dict:
    return {"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                                   "decision": {"behavior": behavior, "message": message}}}


def lead_turn(workdir: Path, cleanup, calls: list[Call], answer: str = "deny"):
    model = ScriptedModel({"lead": [Reply("", calls), Reply("done")]})
    rt = make_runtime(workdir, model)
    cleanup(rt)
    human = FakeHuman(rt, lambda req: answer)
    try:
        rt.team.make_lead().run_turn("go")
    finally:
        human.close()
    last = model.requests_for("lead")[1].messages[-1]
    return rt, human, [b.content for b in last.content]


@pytest.mark.parametrize("behavior, ask_rule, asked, made", [
    ("deny", False, False, False),  # the hook refuses in the human's place
    ("allow", False, False, True),  # the hook approves in the human's place
    ("allow", True, True, False),  # an ask rule still reaches the human (who says no)
])
def test_a_permission_request_hook_answers_for_the_human(
    workdir: Path, tmp_path: Path, cleanup, behavior: str, ask_rule: bool, asked: bool,
    made: bool
) -> None:
    hook = Hook(tmp_path, "perm", stdout=decision(behavior, "not on fridays"))
    extra = {"permissions": {"ask": ["Bash(touch *)"]}} if ask_rule else None
    configure(workdir, {"PermissionRequest": [("Bash", hook)]}, extra=extra)
    _, human, texts = lead_turn(workdir, cleanup, [Call("shell", {"command": "touch made"})])
    assert bool(human.asked) == asked and (workdir / "made").exists() == made
    assert hook.calls()[0]["tool_name"] == "Bash"
    assert hook.calls()[0]["tool_input"]["command"] == "touch made"
    if behavior == "deny":
        assert "PermissionRequest hook: not on fridays" in texts[0]


def test_a_notification_hook_hears_of_a_waiting_approval(
    workdir: Path, tmp_path: Path, cleanup
) -> None:
    hook = Hook(tmp_path, "note")
    configure(workdir, {"Notification": [("permission_prompt", hook)]})
    _, human, _ = lead_turn(workdir, cleanup, [Call("write_file", {"path": "a", "content": "x"})],
                            answer="allow_once")
    assert human.asked and (workdir / "a").read_text() == "x"
    [call] = hook.calls()
    assert call["notification_type"] == "permission_prompt" and "Write" in call["message"]


def test_teammate_turns_fire_subagent_start_stop_and_the_idle_team_notifies(
    workdir: Path, tmp_path: Path, cleanup
) -> None:
    start, stop, note = Hook(tmp_path, "start"), Hook(tmp_path, "stop"), Hook(tmp_path, "note")
    configure(workdir, {"SubagentStart": [("dev", start)], "SubagentStop": [("", stop)],
                        "Notification": [("idle_prompt", note)]})
    model = ScriptedModel({"alice": [Reply("all done here")]})
    rt = make_runtime(workdir, model)
    cleanup(rt)
    rec = Recorder(rt)
    rt.team.spawn("alice", "dev", prompt="say hello")
    rec.wait_for(lambda: bool(note.calls()), what="the idle notification")
    assert [c["agent_type"] for c in start.calls()] == ["dev"]
    [stopped] = stop.calls()
    assert stopped["agent_id"] == "alice" and stopped["last_assistant_message"] == "all done here"
    assert note.calls()[0]["notification_type"] == "idle_prompt"


@pytest.mark.parametrize("matcher, runs", [("manual", True), ("auto", False)])
def test_pre_compact_fires_before_a_manual_compaction(
    workdir: Path, tmp_path: Path, matcher: str, runs: bool
) -> None:
    model = ScriptedModel({"alice": [*tool_rounds(3), Reply("ok"), Reply("the summary")]})
    agent, rec = make_agent(workdir, model, settings=AgentSettings(keep_recent_turns=1))
    hook = Hook(tmp_path, "compact")
    agent.hooks = HookRunner([HookSpec("PreCompact", matcher, hook.command, 30.0, "user")],
                             workdir, lambda e: None, None, "s1", lambda agent: {})
    agent.run_turn("do three things")
    assert agent.compact("manual") is True
    assert [c["trigger"] for c in hook.calls()] == (["manual"] if runs else [])


def test_clear_ends_the_session_and_starts_a_new_one(
    workdir: Path, tmp_path: Path, cleanup
) -> None:
    end, begin = Hook(tmp_path, "end"), Hook(tmp_path, "begin")
    configure(workdir, {"SessionEnd": [("", end)], "SessionStart": [("clear", begin)]})
    rt = make_runtime(workdir, ScriptedModel({}))
    cleanup(rt)
    LeadHooks(rt).cleared()
    assert [c["reason"] for c in end.calls()] == ["clear"]
    assert [c["source"] for c in begin.calls()] == ["clear"]


def test_prompt_hooks_are_named_once_and_not_run(workdir: Path, tmp_path: Path,
                                                  cleanup) -> None:
    hooks = {"Stop": [{"hooks": [{"type": "prompt", "prompt": "done?"}]}],
             "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "prompt", "prompt": "ok?"}]}]}
    path = workdir / ".agent-cli" / "settings.local.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hooks": hooks}), encoding="utf-8")
    rt = make_runtime(workdir, ScriptedModel({}))
    cleanup(rt)
    assert rt.hook_warnings == ['2 hooks of type "prompt" not run: agent-cli runs command '
                                "hooks only"]
    assert not rt.hooks.specs
