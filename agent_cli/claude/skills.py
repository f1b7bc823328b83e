"""Skills, as Claude Code reads them: `.claude/skills/<name>/SKILL.md` (and
`.agent-cli/skills/`) of the workdir, then `~/.claude/skills/` and the user's agent-cli
directory (`skills/`); a project's skill wins over the user's of the same name.

Only each skill's name and description go into the agents' system prompts; the body, and the
files next to it, are read when a model asks for them (tools/skill.py), never before.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from .frontmatter import FrontmatterError, parse
from .paths import lookup_dirs
from .textfiles import read_small, real_dir

NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
MAX_SKILLS = 100
HEADING = "# Skills"


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    folder: Path
    origin: str  # "project" or "user"

    @property
    def path(self) -> Path:
        return self.folder / "SKILL.md"


@dataclass
class Skills:
    skills: dict[str, Skill] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def get(self, name: str) -> Skill | None:
        return self.skills.get(name.strip().casefold())

    def block(self) -> str:
        """The system-prompt section listing the skills ("" when there are none)."""
        if not self.skills:
            return ""
        rows = [f"- {s.name}: {s.description or '(no description)'}"
                for s in self.skills.values()]
        return "\n".join([HEADING, "Skills you can load with the skill tool when a task calls "
                          "for one (only its name and description are here; the tool gives "
                          "its instructions and lists the files beside it):", *rows])



def load_skills(workdir: Path, claude_dir: Path, user_dir: Path) -> Skills:
    found = Skills()
    for root, origin in lookup_dirs("skills", workdir, claude_dir, user_dir):
        if not real_dir(root, found.problems):
            continue
        for folder in sorted(root.iterdir()):
            if len(found.skills) >= MAX_SKILLS:
                found.problems.append(f"{root}: more than {MAX_SKILLS} skills; the rest skipped")
                break
            if not real_dir(folder, found.problems):
                continue
            skill = _load(folder, origin, found.problems)
            if skill is not None and skill.name not in found.skills:
                found.skills[skill.name] = skill
    return found


def _load(folder: Path, origin: str, problems: list[str]) -> Skill | None:
    text = read_small(folder / "SKILL.md", problems)
    if text is None:
        return None
    try:
        doc = parse(text)
    except FrontmatterError as exc:
        problems.append(f"{folder / 'SKILL.md'}: {exc}; skipped")
        return None
    name = (doc.text("name") or folder.name).casefold()
    if not NAME_RE.match(name):
        problems.append(f"{folder}: {name!r} is not a skill name (a-z, 0-9, - and _); skipped")
        return None
    return Skill(name=name, description=doc.text("description")[:1024], folder=folder,
                 origin=origin)


def skill_body(skill: Skill, problems: list[str]) -> str | None:
    """SKILL.md's body (frontmatter left out), read now."""
    text = read_small(skill.path, problems)
    if text is None:
        return None
    try:
        return parse(text).body.strip()
    except FrontmatterError as exc:
        problems.append(f"{skill.path}: {exc}")
        return None
