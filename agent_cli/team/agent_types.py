"""Teammate types from agent definitions (claude/agents.py): a teammate whose role names a
type (`spawn_teammate` with `agent_type`, `/spawn bob code-reviewer`, a resumed member) gets
that type's prompt after agent-cli's own identity and team protocol, its model, and only its
tools among the workspace and MCP tools; the board and team tools it needs to work are always
there. A type only narrows: it never allows a call the rules would not."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..claude.agents import AgentType, AgentTypes, load_agent_types
from ..claude.names import is_claude_model, model_name, tool_names
from ..claude.paths import claude_home
from ..events import Notice

if TYPE_CHECKING:
    from ..tools.base import Tool

PROMPT_HEADING = "# Your agent type"


def agent_types(rt: Any) -> AgentTypes:
    """The agent definitions of this workdir and user, read now (problems said as notices
    once per read)."""
    user_dir = rt.settings.layer("user").path.parent
    return load_agent_types(Path(rt.workdir), claude_home(), user_dir)


def type_prompt(kind: AgentType) -> str:
    """The system-prompt section a type adds (its body is text from a file, shown as such)."""
    return (f"{PROMPT_HEADING}: {kind.name}\n\nYou were started as a {kind.name} "
            f"(defined in {kind.path.name}). Its instructions follow; the team protocol above "
            f"still holds.\n\n{kind.prompt}")


def type_model(rt: Any, name: str, kind: AgentType) -> str | None:
    """The type's model for teammate `name`, or None (the session's); a model that cannot
    be used is one notice."""
    model, problem = model_name(kind.model)
    if model is not None and rt.config.model_factory is None and not is_claude_model(
            rt.model_spec()):
        model, problem = None, (f"model {kind.model.strip()!r} not used: this session runs on "
                                f"{rt.model_spec()}")
    if problem:
        rt.events.emit(Notice(name, f"agent type {kind.name}: {problem}", level="warning"))
    return model


def narrow(kind: AgentType | None, tools: list[Tool], agent: str, events: Any) -> list[Tool]:
    """`tools` (workspace and MCP) cut to the type's list; all of them for no type or no
    list. Names that match no tool here are one notice."""
    if kind is None or kind.tools is None:
        return tools
    keep, unknown = tool_names(kind.tools, [t.name for t in tools])
    if unknown:
        events.emit(Notice(agent, f"agent type {kind.name}: no tool here for "
                           f"{', '.join(unknown)}", level="warning"))
    return [t for t in tools if t.name in keep]


def start_problems(rt: Any) -> list[str]:
    """What could not be read among the agent definitions and custom commands (named once,
    when the lead starts; /agents and /help name them again)."""
    from ..claude.commands import load_commands

    user_dir = rt.settings.layer("user").path.parent
    commands = load_commands(Path(rt.workdir), claude_home(), user_dir)
    return ([f"agents: {p}" for p in agent_types(rt).problems]
            + [f"commands: {p}" for p in commands.problems])


def spawn_listing(rt: Any) -> str:
    """The available types for the lead's spawn_teammate description ("" when none)."""
    try:
        listing = agent_types(rt).listing()
    except OSError:
        return ""
    return f" Agent types (agent_type; the teammate's role becomes the type):\n{listing}" if (
        listing) else ""
