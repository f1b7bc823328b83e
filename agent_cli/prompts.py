"""Loads the system prompts in prompts/ (shipped inside the wheel as agent_cli/prompts/)."""

from __future__ import annotations

from pathlib import Path

from .errors import AgentCliError


def prompts_dir() -> Path:
    """The installed copy (agent_cli/prompts) if present, else the source checkout's prompts/."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "prompts", here.parent / "prompts"):
        if candidate.is_dir():
            return candidate
    raise AgentCliError("prompts directory not found: the installation is incomplete")


def load_prompt(name: str) -> str:
    path = prompts_dir() / f"{name}.md"
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise AgentCliError(f"cannot read prompt {path}: {exc.strerror or exc}") from exc
