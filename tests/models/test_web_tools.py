"""The API's own web tools: offered only when an allow rule enables them (and never at a
local endpoint), denied domains blocked, their blocks sent back whole, shown like any tool
call with the sources cited, and each search priced."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace

import anthropic
import pytest
from support.agent import make_agent
from support.fallible import wire_runtime
from support.stub_rules import validate
from support.stub_server import STUB_MODEL, Reply, StubServer, ToolUse

from agent_cli.agent import AgentSettings
from agent_cli.events import Notice, TextDone, ToolFinished
from agent_cli.models.anthropic import AnthropicModel
from agent_cli.models.web_tools import WEB_FETCH, WEB_SEARCH, offered
from agent_cli.permissions.rules import InvalidRule, parse_rule
from agent_cli.pricing import Ledger, PriceTable, price_rows

SEARCH_USE = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
              "input": {"query": "python 3.14 release date"}}
SEARCH_RESULT = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": [
    {"type": "web_search_result", "url": "https://docs.python.org/3.14/whatsnew.html",
     "title": "What's New In Python 3.14", "encrypted_content": "abc", "page_age": None},
    {"type": "web_search_result", "url": "https://peps.python.org/pep-0745/",
     "title": "PEP 745", "encrypted_content": "def", "page_age": None}]}
CITATION = {"type": "web_search_result_location", "url": "https://peps.python.org/pep-0745/",
            "title": "PEP 745", "encrypted_index": "xyz", "cited_text": "3.14.0 final"}


def rules(*pairs: tuple[str, str]) -> list[SimpleNamespace]:
    return [SimpleNamespace(effect=effect, parsed=parse_rule(text)) for effect, text in pairs]


@pytest.mark.parametrize(("given", "expected"), [
    ([], []),
    ([("allow", "WebSearch")], [WEB_SEARCH]),
    ([("allow", "WebFetch(domain:docs.python.org)"), ("allow", "WebFetch(domain:pypi.org)")],
     [{**WEB_FETCH, "allowed_domains": ["docs.python.org", "pypi.org"]}]),
    ([("allow", "WebFetch"), ("allow", "WebSearch"), ("deny", "WebFetch(domain:evil.example)")],
     [{**WEB_SEARCH, "blocked_domains": ["evil.example"]},
      {**WEB_FETCH, "blocked_domains": ["evil.example"]}]),
    ([("allow", "WebSearch"), ("deny", "WebSearch")], []),
    ([("allow", "WebSearch"), ("ask", "WebSearch")], []),
])
def test_only_what_an_allow_rule_enables_is_offered(given, expected) -> None:
    assert offered(rules(*given), env={}).definitions == expected


def test_a_local_endpoint_gets_no_web_tools_and_is_told_why() -> None:
    tools = offered(rules(("allow", "WebSearch")), env={"ANTHROPIC_BASE_URL":
                                                        "http://127.0.0.1:8080"})
    assert tools.definitions == []
    assert tools.withheld == ["web tools not offered: ANTHROPIC_BASE_URL points at 127.0.0.1, "
                              "which does not run the API's web tools"]
    assert offered(rules(("allow", "WebSearch")),
                   env={"ANTHROPIC_BASE_URL": "https://api.anthropic.com"}).definitions


@pytest.mark.parametrize("text", ["WebSearch(cats)", "WebFetch(evil.example)",
                                  "WebFetch(domain:)", "WebFetch(domain:a b)"])
def test_a_malformed_web_rule_is_one_clear_error(text) -> None:
    with pytest.raises(InvalidRule, match="WebFetch\\(domain:example.com\\)"):
        parse_rule(text)


@pytest.fixture
def stub() -> Iterator[StubServer]:
    with StubServer() as server:
        yield server


def test_a_search_is_sent_back_whole_shown_as_a_tool_and_its_sources_cited(stub, workdir):
    client = anthropic.Anthropic(base_url=stub.url, api_key="test", max_retries=0)
    stub.push(
        Reply("PEP 745 says October.", [ToolUse("echo", {"text": "noted"})],
              server_blocks=[SEARCH_USE, SEARCH_RESULT], citations=[CITATION]),
        Reply("Done."),
    )
    settings = AgentSettings(server_tools=lambda: [WEB_SEARCH])
    agent, rec = make_agent(workdir, AnthropicModel(STUB_MODEL, client=client),
                            settings=settings)

    assert agent.run_turn("when is 3.14 out?").text == "Done."
    assert stub.rejections == []
    first, second = stub.requests
    assert first["tools"][0] == WEB_SEARCH
    sent = second["messages"][1]["content"]
    assert sent[0] == SEARCH_USE and sent[1] == SEARCH_RESULT
    assert sent[2] == {"type": "text", "text": "PEP 745 says October.", "citations": [CITATION]}
    [search] = [e for e in rec.of(ToolFinished) if e.tool == "web_search"]
    assert (search.summary, search.ok, search.outcome) == ("python 3.14 release date", True,
                                                           "2 results")
    [text] = [e for e in rec.of(TextDone) if e.text.startswith("PEP")]
    assert text.sources == ("PEP 745 — https://peps.python.org/pep-0745/",)
    assert agent.usage.web_search_requests == 1
    cost = price_rows(agent.spend.rows(), PriceTable.load())
    no_search = price_rows([{k: v for k, v in r.items() if k != "web_search_requests"}
                            for r in agent.spend.rows()], PriceTable.load())
    assert cost.usd is None or round(cost.usd - no_search.usd, 6) == 0.01


def test_the_stub_refuses_a_search_call_sent_back_without_its_result() -> None:
    body = {"model": STUB_MODEL, "max_tokens": 100, "tools": [WEB_SEARCH], "messages": [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": [SEARCH_USE, SEARCH_RESULT,
                                          {"type": "text", "text": "a"}]},
        {"role": "user", "content": "more"}]}
    assert validate(body) is None
    del body["messages"][1]["content"][1]
    assert "has no result block in the same message" in validate(body)


def test_a_priced_search_costs_a_cent() -> None:
    ledger = Ledger(PriceTable.load())
    ledger.add("claude-sonnet-4-5", {"input_tokens": 0, "output_tokens": 0,
                                     "web_search_requests": 3})
    assert round(price_rows(ledger.rows(), PriceTable.load()).usd, 6) == 0.03


def test_rules_in_the_session_decide_what_the_lead_is_offered(stub, workdir, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    stub.push(Reply("Hi."))
    rt = wire_runtime(workdir, stub, allow=["WebSearch", "WebFetch"],
                      deny=["WebFetch(domain:evil.example)"])
    try:
        lead = rt.team.make_lead()
        lead.run_turn("hi")
    finally:
        rt.close()
    names = [t["name"] for t in stub.requests[0]["tools"]]
    assert names[:2] == ["web_search", "web_fetch"]
    assert stub.requests[0]["tools"][1]["blocked_domains"] == ["evil.example"]


def test_at_a_local_endpoint_the_lead_says_once_why_web_tools_are_off(stub, workdir,
                                                                       monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    stub.push(Reply("Hi."))
    rt = wire_runtime(workdir, stub, allow=["WebSearch"])
    seen: list[Notice] = []
    rt.events.subscribe(lambda e: seen.append(e) if isinstance(e, Notice) else None)
    try:
        rt.team.make_lead().run_turn("hi")
    finally:
        rt.close()
    assert "web_search" not in [t["name"] for t in stub.requests[0]["tools"]]
    assert [n.text for n in seen if "web tools" in n.text] == [
        "web tools not offered: ANTHROPIC_BASE_URL points at 127.0.0.1, which does not run "
        "the API's web tools"]
