"""Which model a `--model` spec means, and building it.

Specs: "demo" (offline DemoModel), "script:PATH.json" (ScriptedModel.from_file), anything
else a model name for the Anthropic adapter (Claude, or whatever an Anthropic-compatible
server at ANTHROPIC_BASE_URL serves). Resolution: explicit --model, then AGENT_CLI_MODEL,
then the newest Sonnet the installed SDK lists when credentials are present, else "demo".

Nothing here imports the anthropic SDK: the default model name is read from the SDK's
source file without importing it, and adapters are imported when built.
"""

from __future__ import annotations

import importlib.util
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import UserError

if TYPE_CHECKING:
    from .base import Model

DEMO = "demo"
SCRIPT_PREFIX = "script:"
FALLBACK_MODEL = "claude-sonnet-4-5"
CREDENTIAL_VARS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL")
MODEL_ENV = "AGENT_CLI_MODEL"

_SONNET = re.compile(r'"(claude-sonnet-(\d+)(?:-(\d{1,2}))?(?:-(\d{8}))?)"')
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/@+-]*$")


def has_credentials(env: Mapping[str, str] = os.environ) -> bool:
    """True when the SDK would find a key or token, or a custom endpoint is configured."""
    return any((env.get(var) or "").strip() for var in CREDENTIAL_VARS)


def default_model_name() -> str:
    """The newest "claude-sonnet-*" alias in the installed SDK's model list (else a constant)."""
    source = _sdk_model_source()
    if source is None:
        return FALLBACK_MODEL
    return newest_sonnet(source) or FALLBACK_MODEL


def newest_sonnet(text: str) -> str | None:
    """Pick the highest-versioned Sonnet name in `text`, preferring an undated alias."""
    best: tuple[tuple[int, int, int], str] | None = None
    for name, major, minor, date in _SONNET.findall(text):
        # Undated aliases sort above dated snapshots of the same version.
        key = (int(major), int(minor or 0), 1 if not date else 0)
        if best is None or key > best[0]:
            best = (key, name)
    return best[1] if best else None


def _sdk_model_source() -> str | None:
    try:
        spec = importlib.util.find_spec("anthropic")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        path = Path(location) / "types" / "model.py"
        try:
            return path.read_text(encoding="utf-8")
        except OSError:
            continue
    return None


def resolve_spec(spec: str | None, env: Mapping[str, str] = os.environ) -> str:
    """The model spec to use: explicit > AGENT_CLI_MODEL > default Claude (credentials) > demo."""
    for candidate in (spec, env.get(MODEL_ENV)):
        if candidate is not None and candidate.strip():
            return candidate.strip()
    return default_model_name() if has_credentials(env) else DEMO


def model_name(spec: str) -> str | None:
    """The name the model a resolved spec builds will have, without building it (the demo
    and Claude adapters load their modules at first use); UserError for a spec that cannot be
    a model. None for a script: only reading the file says whether it is one."""
    spec = spec.strip()
    if spec == DEMO:
        return DEMO
    if spec.startswith(SCRIPT_PREFIX):
        return None
    if not _NAME.match(spec):
        raise UserError(f"not a model name: {spec!r} (use 'demo', 'script:PATH' or a model name)")
    return spec


def make_model(spec: str) -> Model:
    """Build the model a resolved spec names; UserError for a spec that cannot be one."""
    spec = spec.strip()
    if spec == DEMO:
        from .demo import DemoModel

        return DemoModel()
    if spec.startswith(SCRIPT_PREFIX):
        path = spec[len(SCRIPT_PREFIX) :].strip()
        if not path:
            raise UserError("--model script: needs a path, e.g. script:run.json")
        from .scripted import ScriptedModel

        return ScriptedModel.from_file(Path(path).expanduser())
    if not _NAME.match(spec):
        raise UserError(f"not a model name: {spec!r} (use 'demo', 'script:PATH' or a model name)")
    from .anthropic import AnthropicModel

    return AnthropicModel(spec)
