"""Agent definitions (Claude Code's subagents) read as teammate types.

`.claude/agents/*.md` and `.agent-cli/agents/*.md` of the workdir, then `~/.claude/agents/`
and the user's agent-cli directory (`agents/`); a project's definition wins over the user's
of the same name. Frontmatter: `name` (else the file name), `description`, `tools` (absent:
every tool; a list only narrows), `model`; the body is the type's prompt. A definition is
text: it adds a prompt, picks a model and narrows tools, and can never allow anything.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from .frontmatter import FrontmatterError, parse
from .paths import lookup_dirs
from .textfiles import markdown_files, read_small

TYPE_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


@dataclass(frozen=True)
class AgentType:
    """One definition: its name, what it is for, its tools (None: all), model and prompt."""

    name: str
    description: str
    prompt: str
    path: Path
    origin: str  # "project" or "user"
    tools: tuple[str, ...] | None = None
    model: str = ""


@dataclass
class AgentTypes:
    types: dict[str, AgentType] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def get(self, name: str | None) -> AgentType | None:
        if not name:
            return None
        return self.types.get(" ".join(name.split()).casefold())

    def listing(self) -> str:
        """`- name: description` per type, for the lead's spawn_teammate description."""
        return "\n".join(f"- {t.name}: {t.description or '(no description)'}"
                         for t in self.types.values())



def load_agent_types(workdir: Path, claude_dir: Path, user_dir: Path) -> AgentTypes:
    found = AgentTypes()
    for root, origin in lookup_dirs("agents", workdir, claude_dir, user_dir):
        for path in markdown_files(root, found.problems):
            if path.parent != root:
                continue  # definitions live directly in the folder
            defined = _load(path, origin, found.problems)
            if defined is not None and defined.name not in found.types:
                found.types[defined.name] = defined
    return found


def _load(path: Path, origin: str, problems: list[str]) -> AgentType | None:
    text = read_small(path, problems)
    if text is None:
        return None
    try:
        doc = parse(text)
    except FrontmatterError as exc:
        problems.append(f"{path}: {exc}; skipped")
        return None
    name = (doc.text("name") or path.stem).casefold()
    if not TYPE_RE.match(name):
        problems.append(f"{path}: {name!r} is not an agent name (a-z, 0-9, - and _); skipped")
        return None
    tools = tuple(doc.items("tools")) if "tools" in doc.fields else None
    return AgentType(name=name, description=doc.text("description"), prompt=doc.body.strip(),
                     path=path, origin=origin, tools=tools, model=doc.text("model"))
