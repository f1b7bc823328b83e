"""Where extended thinking comes from (flags, MAX_THINKING_TOKENS, settings, a teammate's
own), what it adds to a request, and how it shows: one dim line in the feed, the whole text
on Ctrl-O, a thinking block in stream-json."""

from __future__ import annotations

import json

import pytest
from support.team import Recorder, make_runtime

from agent_cli.cli import build_parser, runtime_config
from agent_cli.errors import UserError
from agent_cli.events import ThinkingDone
from agent_cli.models.anthropic import build_params
from agent_cli.models.base import Message, ModelRequest, TextBlock
from agent_cli.models.scripted import Call, Reply, ScriptedModel
from agent_cli.models.thinking import Thinking, ThinkingError, resolve
from agent_cli.ui.render import event_line, last_thinking
from agent_cli.ui.stream_json import event_record


@pytest.mark.parametrize(("flag", "env", "setting", "expected"), [
    (None, {}, None, None),  # off by default
    (True, {}, None, Thinking("enabled", 10_000)),
    (4096, {}, {"type": "adaptive"}, Thinking("enabled", 4096)),
    (False, {"MAX_THINKING_TOKENS": "5000"}, {"type": "adaptive"}, None),
    (None, {"MAX_THINKING_TOKENS": "5000"}, {"type": "adaptive"}, Thinking("enabled", 5000)),
    (None, {"MAX_THINKING_TOKENS": "0"}, {"type": "adaptive"}, None),
    (None, {}, {"type": "adaptive"}, Thinking("adaptive")),
    (None, {}, {"type": "enabled", "budget_tokens": 2000}, Thinking("enabled", 2000)),
    (None, {}, {"type": "disabled"}, None),
])
def test_the_strongest_source_decides(flag, env, setting, expected) -> None:
    assert resolve(flag, env, setting) == expected


@pytest.mark.parametrize(("flag", "env", "setting", "words"), [
    (512, {}, None, "--thinking: the thinking budget must be at least 1024"),
    (None, {"MAX_THINKING_TOKENS": "lots"}, None, "MAX_THINKING_TOKENS: the thinking budget"),
    (None, {}, {"type": "deep"}, "settings: thinking.type 'deep' is not one of"),
    (None, {}, "yes", "settings: 'thinking' must be an object"),
])
def test_a_bad_thinking_value_is_one_clear_error(flag, env, setting, words) -> None:
    with pytest.raises(ThinkingError, match=words):
        resolve(flag, env, setting)


def test_flags_and_the_settings_file_reach_the_runtime_config(workdir, monkeypatch) -> None:
    monkeypatch.delenv("MAX_THINKING_TOKENS", raising=False)
    settings = workdir / ".agent-cli" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"thinking": {"type": "enabled", "budget_tokens": 3000}}))
    parse = build_parser().parse_args

    assert runtime_config(parse(["-C", str(workdir)])).thinking == Thinking("enabled", 3000)
    assert runtime_config(parse(["-C", str(workdir), "--thinking", "8000"])).thinking == \
        Thinking("enabled", 8000)
    assert runtime_config(parse(["-C", str(workdir), "--no-thinking"])).thinking is None
    settings.write_text(json.dumps({"thinking": {"type": "enabled", "budget_tokens": 10}}))
    with pytest.raises(UserError, match=r"settings\.json: the thinking budget must be at least"):
        runtime_config(parse(["-C", str(workdir)]))


def test_a_request_with_a_budget_raises_max_tokens_above_it() -> None:
    request = ModelRequest(agent="lead", system="s", max_tokens=8192,
                           messages=[Message(role="user", content=[TextBlock(text="hi")])],
                           thinking=Thinking("enabled", 10_000).param())
    params = build_params("claude-x", request)
    assert params["thinking"] == {"type": "enabled", "budget_tokens": 10_000}
    assert params["max_tokens"] == 18_192
    adaptive = request.model_copy(update={"thinking": Thinking("adaptive").param()})
    assert build_params("claude-x", adaptive)["max_tokens"] == 8192
    plain = request.model_copy(update={"thinking": None})
    assert "thinking" not in build_params("claude-x", plain)


def test_a_teammate_can_think_with_its_own_budget(workdir) -> None:
    model = ScriptedModel({
        "lead": [Reply("", [Call("spawn_teammate", {"name": "deep", "role": "thinker",
                                                     "prompt": "hi", "thinking": 4096}),
                            Call("spawn_teammate", {"name": "quick", "role": "doer",
                                                     "prompt": "hi", "thinking": False}),
                            Call("spawn_teammate", {"name": "bad", "role": "doer",
                                                     "thinking": 10})]),
                 Reply("Spawned.")],
        "*": [Reply("", [Call("idle", {})])] * 4,
    })
    rt = make_runtime(workdir, model, thinking=Thinking("adaptive"))
    rec = Recorder(rt)
    try:
        rt.team.make_lead().run_turn("spawn them")
        rec.wait_for(lambda: model.requests_for("deep") and model.requests_for("quick"),
                     what="both teammates' first requests")
        assert model.requests_for("lead")[0].thinking == {"type": "adaptive"}
        assert model.requests_for("deep")[0].thinking == {"type": "enabled",
                                                          "budget_tokens": 4096}
        assert model.requests_for("quick")[0].thinking is None
        failed = [e for e in rec.of("ToolFinished") if not e.ok]
        assert len(failed) == 1 and "at least 1024" in failed[0].outcome
        assert "bad" not in [m.name for m in rt.roster.members()]
    finally:
        rt.close()


def test_thinking_shows_as_one_dim_line_and_in_full_on_request() -> None:
    done = ThinkingDone("lead", "First I check the board.\nThen I plan.", 6.0)
    assert event_line(done).plain == "lead     ✻ thought for 6s · ctrl-o to read it"
    teammate = ThinkingDone("alice", "hm", 1.5)
    assert event_line(teammate) is None  # a teammate's thinking is /verbose only
    assert event_line(teammate, verbose=True).plain.endswith("✻ thought for 1.5s · ctrl-o "
                                                            "to read it")
    redacted = ThinkingDone("lead", "", 2.0, redacted=1)
    assert event_line(redacted).plain.endswith("thought for 2s (1 block redacted)")
    conversation = [Message(role="user", content=[TextBlock(text="go")]),
                    Message.model_validate({"role": "assistant", "content": [
                        {"type": "thinking", "thinking": "the plan", "signature": "s"},
                        {"type": "text", "text": "ok"}]}),
                    Message(role="user", content=[TextBlock(text="more")]),
                    Message(role="assistant", content=[TextBlock(text="fine")])]
    assert last_thinking(conversation) == "the plan"
    record = event_record(done)
    assert record["message"]["content"] == [{"type": "thinking",
                                             "thinking": "First I check the board.\nThen I plan."}]


@pytest.mark.parametrize(("model", "beta"), [
    ("claude-sonnet-4-5", True), ("claude-sonnet-4-5-20250929", True), ("claude-opus-4-1", True),
    ("claude-opus-4-6", False),  # adaptive-era models interleave by themselves
    ("local", False),
])
def test_a_fixed_budget_claude_4_model_is_asked_to_think_between_tool_calls(model, beta) -> None:
    request = ModelRequest(agent="lead", system="s",
                           messages=[Message(role="user", content=[TextBlock(text="hi")])],
                           thinking=Thinking("enabled", 2048).param())
    headers = build_params(model, request).get("extra_headers", {})
    assert (headers.get("anthropic-beta") == "interleaved-thinking-2025-05-14") is beta
    adaptive = request.model_copy(update={"thinking": Thinking("adaptive").param()})
    assert "extra_headers" not in build_params(model, adaptive)
