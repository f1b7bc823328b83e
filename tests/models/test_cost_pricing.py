"""Cost in dollars: the shipped price table covers the SDK's models, usage is priced per
model and tier with the table's rates, an unknown model shows tokens only (never a price),
and `/cost` and the headless JSON report the same figures."""

from __future__ import annotations

import io
import json
import typing
from argparse import Namespace
from pathlib import Path

import pytest
from rich.console import Console
from support.team import make_runtime

from agent_cli.models.base import Usage
from agent_cli.models.scripted import Reply, ScriptedModel
from agent_cli.pricing import Ledger, PriceTable, combine, price_rows
from agent_cli.team.roster import Roster
from agent_cli.ui.headless import run_headless

TABLE = PriceTable.load()
RAW = json.loads((Path(__file__).parents[2] / "agent_cli" / "pricing.json").read_text())


def sdk_models() -> list[str]:
    from anthropic.types.model import Model

    (literal, _str) = typing.get_args(Model)
    return list(typing.get_args(literal))


def test_every_model_the_sdk_names_is_priced_or_listed_as_unpriced() -> None:
    names = sdk_models()
    assert names, "the SDK's model list is empty"
    for name in names:
        assert TABLE.lookup(name) is not None or TABLE.canonical(name) is None and any(
            name.startswith(u) for u in RAW["unpriced"]), f"{name}: no price and not listed"
    assert RAW["checked"] and RAW["source"].startswith("https://")


def test_each_kind_of_token_is_priced_at_its_own_rate() -> None:
    ledger = Ledger(TABLE)
    ledger.add("claude-sonnet-4-5", {"input_tokens": 1000, "output_tokens": 500,
                                     "cache_creation_input_tokens": 2000,
                                     "cache_read_input_tokens": 10_000})
    cost = price_rows(ledger.rows(), TABLE)
    # 1000*$3 + 500*$15 + 2000*$3.75 + 10000*$0.30, per million
    assert cost.usd == pytest.approx(0.021)
    assert cost.tokens == 13_500 and cost.complete and cost.text() == "$0.02"


def test_responses_add_up_and_dated_or_1m_spellings_price_as_their_model() -> None:
    ledger = Ledger(TABLE)
    ledger.add("claude-opus-4-5-20251101", {"input_tokens": 1_000_000})
    ledger.add("claude-opus-4-5", {"output_tokens": 1_000_000})
    ledger.add("claude-sonnet-4-6[1m]", {"input_tokens": 1_000_000})
    assert price_rows(ledger.rows(), TABLE).usd == pytest.approx(5 + 25 + 3)
    assert TABLE.canonical("anthropic.claude-haiku-4-5-20251001-v1:0") == "claude-haiku-4-5"


def test_a_long_prompt_is_priced_at_the_long_prompt_rates_for_the_whole_request() -> None:
    ledger = Ledger(TABLE)
    ledger.add("claude-haiku-5-5", {"input_tokens": 60_000, "cache_read_input_tokens": 50_000,
                                    "output_tokens": 1000})  # prompt 110k > 100k
    ledger.add("claude-haiku-5-5", {"input_tokens": 90_000, "output_tokens": 1000})
    long = 60_000 * 0.50 + 50_000 * 0.05 + 1000 * 2.50
    short = 90_000 * 0.10 + 1000 * 0.50
    assert price_rows(ledger.rows(), TABLE).usd == pytest.approx((long + short) / 1e6)
    assert sorted(r["tier"] for r in ledger.rows()) == ["base", "long_prompt"]


def test_an_unknown_model_shows_tokens_and_no_price() -> None:
    ledger = Ledger(TABLE)
    ledger.add("llama-3-local", {"input_tokens": 700, "output_tokens": 300})
    cost = price_rows(ledger.rows(), TABLE)
    assert cost.usd is None and cost.text() == "-"
    assert cost.tokens == cost.unpriced_tokens == 1000
    assert cost.unpriced_models == ("llama-3-local",)
    both = combine([cost, price_rows([{"model": "claude-opus-4-5", "output_tokens": 40_000}],
                                     TABLE)])
    assert both.usd == pytest.approx(1.0) and both.text() == "$1.00 + unpriced"


def scripted(name: str) -> ScriptedModel:
    return ScriptedModel({
        "lead": [Reply("one", usage=Usage(input_tokens=2000, output_tokens=100)),
                 Reply("two", usage=Usage(input_tokens=500, cache_read_input_tokens=4000,
                                          output_tokens=200))],
    }, name=name)


def test_slash_cost_shows_dollars_per_agent_and_a_total(workdir: Path) -> None:
    from agent_cli.ui.render import UiSettings
    from agent_cli.ui.slash import SlashContext, dispatch

    rt = make_runtime(workdir, scripted("claude-sonnet-4-5"))
    try:
        lead = rt.team.make_lead()
        lead.run_turn("hi")
        lead.run_turn("again")
        Roster(workdir / ".team").add("alice", "tester", model="qwen-local")
        Roster(workdir / ".team").update("alice", tokens=900, spend=[
            {"model": "qwen-local", "tier": "base", "input_tokens": 800, "output_tokens": 100}])

        class Handle:
            agent = lead
            busy = False

        out = io.StringIO()
        ctx = SlashContext(Console(file=out, width=120), rt, Handle(), UiSettings())
        assert dispatch(ctx, "/cost").ok
    finally:
        rt.close(5)
    text = out.getvalue()
    # lead: 2500*$3 + 300*$15 + 4000*$0.30 = $0.0132
    lead_line = next(line for line in text.splitlines() if line.startswith("lead"))
    assert "claude-sonnet-4-5" in lead_line and "$0.01" in lead_line and "6,800" in lead_line
    alice = next(line for line in text.splitlines() if line.startswith("alice"))
    assert alice.rstrip().endswith("-") and "900" in alice
    assert "no price for qwen-local: tokens only" in text
    assert "$0.01 + unpriced" in text


def test_headless_json_reports_cost_usd(workdir: Path) -> None:
    rt = make_runtime(workdir, scripted("claude-opus-4-5"))
    out, err = io.StringIO(), io.StringIO()
    args = Namespace(prompt="go", wait=False, timeout=30, output_format="json")
    assert run_headless(rt, args, out, err) == 0, err.getvalue()
    usage = json.loads(out.getvalue())["usage"]
    assert usage["cost_usd"] == pytest.approx((2000 * 5 + 100 * 25) / 1e6)
    assert usage["cost_by_agent"] == {"lead": usage["cost_usd"]}
    assert usage["unpriced_tokens"] == 0 and usage["prices_checked"] == RAW["checked"]


def test_headless_json_for_an_unpriced_model_has_a_null_cost(workdir: Path) -> None:
    rt = make_runtime(workdir, scripted("local-server"))
    out, err = io.StringIO(), io.StringIO()
    args = Namespace(prompt="go", wait=False, timeout=30, output_format="json")
    assert run_headless(rt, args, out, err) == 0, err.getvalue()
    usage = json.loads(out.getvalue())["usage"]
    assert usage["cost_usd"] is None and usage["unpriced_tokens"] == 2100
    assert usage["unpriced_models"] == ["local-server"]


def test_rows_from_a_hand_edited_file_never_crash_the_pricing() -> None:
    rows = ["junk", {"model": 5, "input_tokens": "many", "output_tokens": True},
            {"model": "claude-haiku-4-5", "output_tokens": 1_000_000}]
    cost = price_rows(rows, TABLE)
    assert cost.usd == pytest.approx(5.0) and cost.tokens == 1_000_000
