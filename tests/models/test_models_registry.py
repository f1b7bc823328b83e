"""Which model a --model spec means, and that choosing one does not import the SDK."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent_cli.errors import UserError
from agent_cli.models import registry
from agent_cli.models.anthropic import AnthropicModel
from agent_cli.models.scripted import ScriptedModel


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, False),
        ({"ANTHROPIC_API_KEY": "sk-test"}, True),
        ({"ANTHROPIC_AUTH_TOKEN": "tok"}, True),
        ({"ANTHROPIC_BASE_URL": "http://127.0.0.1:8080"}, True),
        ({"ANTHROPIC_API_KEY": "  "}, False),
        ({"OPENAI_API_KEY": "x"}, False),
    ],
)
def test_has_credentials(env: dict[str, str], expected: bool) -> None:
    assert registry.has_credentials(env) is expected


def test_resolve_spec_precedence() -> None:
    creds = {"ANTHROPIC_API_KEY": "sk-test"}
    both = {**creds, "AGENT_CLI_MODEL": "claude-from-env"}
    assert registry.resolve_spec("script:x.json", both) == "script:x.json"
    assert registry.resolve_spec(None, both) == "claude-from-env"
    assert registry.resolve_spec("  ", both) == "claude-from-env"
    assert registry.resolve_spec(None, creds) == registry.default_model_name()
    assert registry.resolve_spec(None, {}) == "demo"
    assert registry.resolve_spec(None, {"AGENT_CLI_MODEL": "demo"}) == "demo"


def test_default_is_the_newest_sonnet_the_sdk_lists() -> None:
    import typing

    import anthropic.types.model as sdk_model

    listed = [
        name
        for arg in typing.get_args(sdk_model.Model)
        for name in typing.get_args(arg)
        if str(name).startswith("claude-sonnet-")
    ]
    name = registry.default_model_name()
    assert name in listed
    assert registry.newest_sonnet(json.dumps(listed)) == name


def test_newest_sonnet_ordering() -> None:
    text = '"claude-sonnet-4-5-20250929" "claude-sonnet-4-5" "claude-sonnet-5" "claude-opus-9"'
    assert registry.newest_sonnet(text) == "claude-sonnet-5"
    assert (
        registry.newest_sonnet('"claude-sonnet-4-6" "claude-sonnet-4-10"') == "claude-sonnet-4-10"
    )
    assert registry.newest_sonnet('"claude-sonnet-4-5-20250929"') == "claude-sonnet-4-5-20250929"
    assert registry.newest_sonnet('"claude-haiku-4-5"') is None


def test_make_model_script_and_claude(tmp_path: Path) -> None:
    script = tmp_path / "run.json"
    script.write_text('{"lead": [{"text": "hi"}]}')
    model = registry.make_model(f"script:{script}")
    assert isinstance(model, ScriptedModel)
    assert model.remaining() == {"lead": 1}
    claude = registry.make_model("claude-sonnet-4-5")
    assert isinstance(claude, AnthropicModel) and claude.name == "claude-sonnet-4-5"
    assert registry.make_model("qwen2.5:7b").name == "qwen2.5:7b"  # a local server's model


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("script:", "needs a path"),
        ("script:/nonexistent/run.json", "not found"),
        ("two words", "not a model name"),
        ("", "not a model name"),
    ],
)
def test_make_model_refuses_bad_specs(spec: str, message: str) -> None:
    with pytest.raises(UserError, match=message):
        registry.make_model(spec)


def test_make_model_demo() -> None:
    demo = pytest.importorskip("agent_cli.models.demo")
    assert isinstance(registry.make_model("demo"), demo.DemoModel)


def test_choosing_and_building_a_model_does_not_import_the_sdk() -> None:
    code = (
        "import sys\n"
        "from agent_cli.models import registry\n"
        "name = registry.resolve_spec(None, {'ANTHROPIC_API_KEY': 'x'})\n"
        "model = registry.make_model(name)\n"
        "print(name, 'anthropic' in sys.modules, 'httpx2' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    ).stdout.split()
    assert out[0].startswith("claude-sonnet-")
    assert out[1:] == ["False", "False"]
