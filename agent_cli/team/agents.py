"""How the team builds an Agent for the lead or a teammate.

Both get the same wiring: a system prompt from prompts/<name>.md with `$name $role $team
$workdir` filled in, followed by the project memory (and, for the lead,
--append-system-prompt), an Identity, their role's board/team tools plus the workspace tools,
the events bus, a transcript in `.team/transcripts/<name>.jsonl`, and the runtime's
compaction threshold. What differs is passed in: the tools, the gate (a teammate's sees its
denials), the identity extra and whether to resume from an existing transcript.
"""

from __future__ import annotations

from collections.abc import Callable
from string import Template
from typing import TYPE_CHECKING, Any

from ..claude.agents import AgentType
from ..claude.paths import claude_home
from ..claude.skills import Skills, load_skills
from ..events import Notice
from ..names import LEAD
from ..prompts import load_prompt
from ..tools.skill import skill_tool
from .agent_types import narrow, start_problems, type_prompt

if TYPE_CHECKING:
    from pathlib import Path

    from ..agent.agent import Agent
    from ..models.thinking import Thinking
    from ..runtime import Runtime
    from ..tools.base import Tool


def render_prompt(prompt_name: str, **values: object) -> str:
    """prompts/<name>.md with $placeholders filled (unknown ones are left as they are)."""
    filled = {k: str(v) for k, v in values.items()}
    return Template(load_prompt(prompt_name)).safe_substitute(filled)


def build_agent(
    rt: Runtime,
    name: str,
    role: str,
    prompt_name: str,
    role_tools: list[Tool],
    gate: Any,
    *,
    model: str | None = None,
    extra_identity: Callable[[], str] | None = None,
    resume: bool = False,
    transcript_dir: Path | None = None,
    thinking: Thinking | None | bool = True,
    agent_type: AgentType | None = None,
) -> Agent:
    """An Agent called `name` with `role_tools` + the workspace tools, checked by `gate`.
    `thinking`: True (the session's extended thinking), or the agent's own (None: off).
    `agent_type`: its prompt follows the rendered one; its tool list narrows the workspace
    and MCP tools (agent_types.py), never the role tools."""
    from ..agent.agent import Agent, AgentSettings
    from ..agent.identity import Identity
    from ..tools.base import ToolSet
    from ..tools.workspace import workspace_tools

    team_name = rt.roster.team_name
    system = render_prompt(prompt_name, name=name, role=role, team=team_name, workdir=rt.workdir)
    if agent_type is not None:
        system = f"{system.rstrip()}\n\n{type_prompt(agent_type)}\n"
    skills = skills_of(rt)
    system = compose_system(system, rt, lead=name == LEAD, skills=skills)
    if skills.skills:
        role_tools = [*role_tools, skill_tool(skills)]  # read-only; a type never removes it
    if name == LEAD:  # said once, at the lead's start
        for problem in [f"skills: {p}" for p in skills.problems] + start_problems(rt):
            rt.events.emit(Notice(LEAD, problem, level="warning"))
    made = rt.make_model(name, model)
    mcp = rt.mcp.tools if rt.mcp else None
    if agent_type is not None and agent_type.tools is not None and mcp is not None:
        mcp = _narrowed(mcp, agent_type)
    return Agent(
        Identity(name, role, team_name, rt.workdir),
        system,
        made,
        ToolSet(role_tools + narrow(agent_type, workspace_tools(getattr(rt, "sandbox", None)),
                                    name, rt.events),
                extra=mcp),
        gate,
        rt.events,
        transcript_dir=transcript_dir or rt.team_dir / "transcripts",
        settings=AgentSettings(
            compact_threshold_tokens=rt.config.compact_threshold_tokens,
            retry=rt.retry_policy(),
            thinking=rt.config.thinking if thinking is True else thinking or None,
            server_tools=web_tools_of(rt) if getattr(made, "runs_server_tools", False) else None,
        ),
        hooks=rt.hooks,
        extra_identity=extra_identity,
        resume=resume,
    )


def _narrowed(tools: Callable[[], list[Tool]], kind: AgentType) -> Callable[[], list[Tool]]:
    """The MCP tools a type lists (asked again at every lookup, as servers come up)."""
    keep = set(kind.tools or ())
    return lambda: [t for t in tools() if t.name in keep]


def web_tools_of(rt: Runtime) -> Callable[[], list[dict[str, Any]]]:
    """The API's web tools the current rules enable (asked again before every request, so a
    rule added with /permissions counts at once)."""
    from ..models.web_tools import offered

    return lambda: offered(rt.policy.rules()).definitions


def skills_of(rt: Runtime) -> Skills:
    """The skills of this workdir and user (claude/skills.py), read now."""
    from pathlib import Path

    user_dir = rt.settings.layer("user").path.parent
    return load_skills(Path(rt.workdir), claude_home(), user_dir)


def compose_system(system: str, rt: Runtime, lead: bool, skills: Skills | None = None) -> str:
    """The rendered prompt + the project memory (every agent) + the skills' names and
    descriptions and the additional directories (every agent) + for the lead, in a headless
    run, prompts/headless.md (nobody approves: what to tell the user instead) and
    --append-system-prompt. Part of the
    system prompt, so compaction never drops it."""
    parts = [system.rstrip("\n")]
    memory = rt.memory.block()
    if memory:
        parts.append(memory)
    if lead and getattr(rt.config, "headless", False):
        parts.append(load_prompt("headless").rstrip("\n"))
    listed = skills.block() if skills is not None else ""
    if listed:
        parts.append(listed)
    dirs = rt.policy.extra_dirs() if getattr(rt, "policy", None) is not None else []
    if dirs:  # permissions.additionalDirectories, --add-dir
        parts.append("Additional working directories (read_file, write_file, edit_file, glob "
                     "and grep work there too; name files there by absolute path): "
                     + ", ".join(str(d.path) for d in dirs))
    extra = (rt.config.append_system_prompt or "").strip()
    if lead and extra:
        parts.append(extra)
    if len(parts) == 1:
        return system
    return "\n\n".join(parts) + "\n"
