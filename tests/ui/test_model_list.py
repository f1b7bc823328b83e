"""`/model` with no argument lists the models the endpoint offers (the Models API through the
real SDK against the wire stub), the lead's current one marked; offline or when the list
fails, one clear line and the current model. The toolbar's context figure."""

from __future__ import annotations

import io
from types import SimpleNamespace

import anthropic
from rich.console import Console
from support.stub_models import entry
from support.stub_server import STUB_MODEL, StubServer

from agent_cli.agent.context import ContextFigure
from agent_cli.models.anthropic import AnthropicModel
from agent_cli.models.demo import DemoModel
from agent_cli.ui.render import UiSettings
from agent_cli.ui.slash import SlashContext, dispatch
from agent_cli.ui.toolbar import StatusSnapshot, toolbar_fragments


def slash_model(model, line: str = "/model") -> str:
    out = io.StringIO()
    lead = SimpleNamespace(agent=SimpleNamespace(model=model), busy=False)
    ctx = SlashContext(Console(file=out, width=120), SimpleNamespace(), lead, UiSettings())
    assert dispatch(ctx, line).ok
    return out.getvalue()


def adapter(stub: StubServer, name: str = STUB_MODEL) -> AnthropicModel:
    client = anthropic.Anthropic(base_url=stub.url, api_key="test", max_retries=0)
    return AnthropicModel(name, client=client)


def test_the_endpoints_models_are_listed_with_the_current_one_marked():
    models = [entry("claude-opus-5-5", 1_000_000, "Claude Opus 5.5"),
              entry("claude-sonnet-4-5-20250929", 200_000, "Claude Sonnet 4.5"),
              entry("local\x1b[31mred", None)]
    with StubServer(models=models) as stub:
        text = slash_model(adapter(stub, "claude-sonnet-4-5"))
        assert stub.gets == ["/v1/models"] and stub.requests == []
    lines = text.splitlines()
    assert lines[0].startswith("  claude-opus-5-5  Claude Opus 5.5  1M context")
    assert lines[1].startswith("● claude-sonnet-4-5-20250929  Claude Sonnet 4.5  200k context")
    assert "local\\x1b[31mred" in lines[2] and "\x1b" not in text  # a server's text is data
    assert lines[-1] == "lead model: claude-sonnet-4-5 · /model NAME switches"


def test_a_failing_list_and_an_offline_model_each_get_one_line():
    with StubServer(models_api=False) as stub:
        failed = slash_model(adapter(stub))
    assert failed.count("\n") == 1
    assert failed.startswith("cannot list the endpoint's models (not_found_error (HTTP 404)")
    assert failed.rstrip().endswith(f"lead model: {STUB_MODEL}")
    assert slash_model(DemoModel()).strip() == (
        "demo is offline: no models endpoint to list. lead model: demo")


def test_the_toolbar_shows_how_full_the_leads_context_is():
    def bar(figure, width=0) -> str:
        frags = toolbar_fragments(StatusSnapshot(), "claude-opus-4-6", "default", 48_200,
                                  width=width, context=figure)
        return "".join(text for _, text in frags)

    assert "ctx 12% of 200k · 48.2k tokens" in bar(ContextFigure(24_100, 200_000, True))
    assert "ctx ~3% of 1M" in bar(ContextFigure(30_000, 1_000_000, False))
    assert "ctx" not in bar(None)
    assert "ctx 12% · 48.2k" in bar(ContextFigure(24_100, 200_000, True), width=90)
