"""The context window and the auto-compaction threshold: the endpoint's word, else the shipped
table, else the stated default; a share of it unless --compact-at set a number. A model
without a count-tokens endpoint (scripted, demo) is said once per agent."""

from __future__ import annotations

from types import SimpleNamespace

from support.agent import make_agent

from agent_cli.agent import AgentSettings
from agent_cli.agent.context import ContextMeter
from agent_cli.events import Notice
from agent_cli.models.base import Usage
from agent_cli.models.scripted import Call, Reply, ScriptedModel
from agent_cli.models.thinking import Thinking
from agent_cli.models.windows import AUTO_COMPACT_SHARE, WindowTable


def meter() -> ContextMeter:
    return ContextMeter("alice", lambda event: None)


def test_the_endpoints_window_then_the_table_then_the_default():
    table = WindowTable.load()
    asks: list[str] = []

    def endpoint_says() -> int:
        asks.append("asked")
        return 50_000

    told = SimpleNamespace(name="claude-sonnet-4-5", context_window=endpoint_says)
    m = meter()
    assert (m.window(told).tokens, m.window(told).source) == (50_000, "endpoint")
    assert asks == ["asked"]  # once per model, not per request
    silent = SimpleNamespace(name="claude-sonnet-4-5-20250929", context_window=lambda: None)
    assert (meter().window(silent).tokens, meter().window(silent).source) == (200_000, "table")
    assert meter().window(SimpleNamespace(name="claude-opus-4-6")).tokens == 1_000_000
    local = meter().window(SimpleNamespace(name="qwen3-coder"))
    assert (local.tokens, local.source) == (table.default, "default")


def test_the_threshold_is_a_share_of_the_window_leaving_room_for_the_reply():
    model = SimpleNamespace(name="claude-haiku-4-5")  # 200k
    plain = AgentSettings(max_tokens=8192)
    assert meter().threshold(model, plain) == int(200_000 * AUTO_COMPACT_SHARE)
    thinking = AgentSettings(max_tokens=60_000, thinking=Thinking("enabled", 100_000))
    assert meter().threshold(model, thinking) == 200_000 - 160_000  # the reply must fit
    assert meter().threshold(model, AgentSettings(compact_threshold_tokens=1234)) == 1234


def test_a_model_without_count_tokens_is_said_once_and_the_estimate_decides(workdir):
    big = [Reply("", [Call("big", {})], usage=Usage(input_tokens=100, output_tokens=5))
           for _ in range(2)]
    model = ScriptedModel({"alice": [big[0], Reply("ok"), big[1], Reply("ok again")]})
    # 5,000-char results (~1,250 tokens): the estimate cannot tell against 2,000
    agent, rec = make_agent(workdir, model,
                            settings=AgentSettings(compact_threshold_tokens=2_000))
    agent.run_turn("read the big file")
    agent.clear()
    agent.run_turn("read it again")

    said = [n.text for n in rec.of(Notice) if "estimated from characters" in n.text]
    assert said == ["context size estimated from characters (scripted has no count-tokens "
                    "endpoint)"]
    assert agent.context.count_calls == 0
    figure = agent.context.figure()
    assert figure is not None and figure.used > 0
