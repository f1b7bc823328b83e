"""The `skill` tool: a skill's instructions (SKILL.md's body) and the files beside it, loaded
when the model asks (claude/skills.py lists only names and descriptions up front).

Read-only, never asks. `file` reads one file of the skill's folder with read_file's
confinement (tools/confined.py: no way out of the folder, no FIFO, a size cap), so a skill in
the user's home is readable while the rest of the home is not.
"""

from __future__ import annotations

import os

from pydantic import BaseModel, ConfigDict, Field

from ..claude.skills import Skills, skill_body
from ..errors import ToolError
from .base import Tool, ToolContext
from .fileio import read_text

MAX_LISTED = 50


class SkillInput(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid")

    name: str = Field(description="the skill's name, as listed under # Skills")
    file: str | None = Field(None, description="optional: a file of the skill's folder "
                             "(relative path) to read instead of its instructions")


def _files(folder: str) -> list[str]:
    found: list[str] = []
    for here, dirs, files in os.walk(folder, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            rel = os.path.relpath(os.path.join(here, name), folder)
            if rel != "SKILL.md":
                found.append(rel)
            if len(found) >= MAX_LISTED:
                return found
    return found


def skill_tool(skills: Skills) -> Tool:
    """The tool, bound to the skills found at start."""

    def run(args: SkillInput, ctx: ToolContext) -> str:
        skill = skills.get(args.name)
        if skill is None:
            known = ", ".join(skills.skills) or "none"
            raise ToolError(f"no skill {args.name!r}; available: {known}")
        if args.file:
            return read_text(skill.folder, args.file)[0]
        problems: list[str] = []
        body = skill_body(skill, problems)
        if body is None:
            raise ToolError(f"skill {skill.name} cannot be read: {'; '.join(problems)}")
        files = _files(str(skill.folder))
        listed = ("\n\nFiles beside it (read one with skill(name, file)): " + ", ".join(files)
                  if files else "")
        return f"{body}{listed}"

    return Tool("skill", "Load a skill's instructions (see # Skills in your system prompt), "
                "or one file of its folder.", SkillInput, run, read_only=True)
