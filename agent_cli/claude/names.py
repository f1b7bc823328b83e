"""Claude Code's names for tools and models, mapped to agent-cli's.

Tools: `Bash` is the shell tool, `Read` read_file, `Write` write_file, `Edit` and `MultiEdit`
edit_file, `Glob` glob, `Grep` grep (a specifier such as `Bash(git diff:*)` names the tool);
agent-cli's own names and `mcp__server__tool` pass as they are. Models: the aliases `haiku`,
`sonnet` and `opus`, `inherit` (the session's), or a full `claude-...` name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

CLAUDE_TOOLS = {"Bash": ("shell",), "Read": ("read_file",), "Write": ("write_file",),
                "Edit": ("edit_file",), "MultiEdit": ("edit_file",), "Glob": ("glob",),
                "Grep": ("grep",), "LS": ("glob",)}
MODEL_ALIASES = {"haiku": "claude-haiku-4-5", "sonnet": "claude-sonnet-4-5",
                 "opus": "claude-opus-4-1"}
CLAUDE_MODEL_RE = re.compile(r"^claude-[a-z0-9.-]+$")


def tool_names(listed: Iterable[str], known: list[str]) -> tuple[list[str], list[str]]:
    """(agent-cli tool names among `known`, entries that name no tool here)."""
    names: list[str] = []
    unknown: list[str] = []
    for entry in listed:
        base = entry.split("(", 1)[0].strip()
        hits = [n for n in CLAUDE_TOOLS.get(base, (base,)) if n in known]
        if not hits:
            unknown.append(entry)
        names += [n for n in hits if n not in names]
    return names, unknown


def model_name(raw: str) -> tuple[str | None, str]:
    """(the Claude model `raw` names, or None; why not, or "" when none was asked for)."""
    raw = raw.strip()
    if not raw or raw == "inherit":
        return None, ""
    name = MODEL_ALIASES.get(raw, raw)
    if not CLAUDE_MODEL_RE.match(name):
        return None, f"model {raw!r} is not a Claude model name; the session's model is used"
    return name, ""


def is_claude_model(spec: str) -> bool:
    return CLAUDE_MODEL_RE.match(spec) is not None
