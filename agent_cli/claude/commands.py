"""Custom slash commands from Markdown files, as Claude Code defines them.

Looked up in `.claude/commands/` and `.agent-cli/commands/` of the workdir, then in
`~/.claude/commands/` ($CLAUDE_CONFIG_DIR) and the user's agent-cli directory (`commands/`):
`name.md` is
`/name`, `frontend/component.md` is `/frontend:component`. A project's file wins over the
user's of the same name (said in /help). Frontmatter: `description` (else the body's first
line), `argument-hint`, `model`, `allowed-tools`. The body is the prompt: `$ARGUMENTS` is
everything after the name, `$1`..`$9` its words; when the body names none of them, the
arguments are added after it as `ARGUMENTS: ...`, as Claude Code does.

`@path` references and `` !`cmd` `` snippets are found here; running them (through the
read_file confinement and the permission gate) is the caller's (ui/custom_commands.py).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from .frontmatter import FrontmatterError, parse
from .paths import lookup_dirs
from .textfiles import markdown_files, read_small

PART_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
PLACEHOLDER_RE = re.compile(r"\$ARGUMENTS|\$([1-9])(?![0-9])")
BANG_RE = re.compile(r"!`([^`\n]+)`")
FILE_REF_RE = re.compile(r"(?<![\w@`/])@((?:[\w.~-]|/)[^\s`'\"<>]*)")
TRAILING = ".,;:!?)]}"


@dataclass(frozen=True)
class CustomCommand:
    """One command file: `/name`, its frontmatter, its body and where it came from."""

    name: str  # "/frontend:component"
    path: Path
    origin: str  # "project" or "user"
    body: str
    description: str = ""
    argument_hint: str = ""
    model: str = ""
    allowed_tools: tuple[str, ...] = ()

    def expand(self, arguments: str) -> str:
        """The body with `$ARGUMENTS` and `$1`..`$9` filled in."""
        args = arguments.strip()
        try:
            words = shlex.split(args)
        except ValueError:  # an unbalanced quote: plain words
            words = args.split()
        used = PLACEHOLDER_RE.search(self.body) is not None

        def fill(m: re.Match[str]) -> str:  # one pass: an argument's own `$1` stays as typed
            if m.group(1) is None:
                return args
            n = int(m.group(1))
            return words[n - 1] if n <= len(words) else ""

        text = PLACEHOLDER_RE.sub(fill, self.body)
        if args and not used:
            text = f"{text.rstrip()}\n\nARGUMENTS: {args}"
        return text.strip()


@dataclass
class CommandSet:
    """The commands found, by name, and what could not be read (one line each)."""

    commands: dict[str, CustomCommand] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    shadowed: list[str] = field(default_factory=list)  # "/name: ~/... hidden by ..."

    def get(self, name: str) -> CustomCommand | None:
        return self.commands.get(name)



def load_commands(workdir: Path, claude_dir: Path, user_dir: Path) -> CommandSet:
    """Every command file; the first of a name (project before user) wins."""
    found = CommandSet()
    for root, origin in lookup_dirs("commands", workdir, claude_dir, user_dir):
        for path in markdown_files(root, found.problems):
            command = _load(path, root, origin, found.problems)
            if command is None:
                continue
            first = found.commands.get(command.name)
            if first is not None:
                found.shadowed.append(f"{command.name}: {path} is hidden by {first.path}")
                continue
            found.commands[command.name] = command
    return found


def _load(path: Path, root: Path, origin: str, problems: list[str]) -> CustomCommand | None:
    parts = path.relative_to(root).with_suffix("").parts
    if not all(PART_RE.match(p) for p in parts):
        problems.append(f"{path}: not a command name (letters, digits, . _ -); skipped")
        return None
    text = read_small(path, problems)
    if text is None:
        return None
    try:
        doc = parse(text)
    except FrontmatterError as exc:
        problems.append(f"{path}: {exc}; skipped")
        return None
    first_line = next((ln.strip() for ln in doc.body.splitlines() if ln.strip()), "")
    return CustomCommand(
        name="/" + ":".join(parts), path=path, origin=origin, body=doc.body,
        description=doc.text("description") or first_line.lstrip("# ")[:100],
        argument_hint=doc.text("argument-hint"), model=doc.text("model"),
        allowed_tools=tuple(doc.items("allowed-tools")))


def file_refs(text: str) -> list[str]:
    """The `@path` references of an expanded command, in order, each once."""
    refs = []
    for m in FILE_REF_RE.finditer(text):
        ref = m.group(1).rstrip(TRAILING)
        if ref and ref not in refs:
            refs.append(ref)
    return refs


def bang_commands(text: str) -> list[str]:
    """The `` !`cmd` `` snippets of an expanded command, in order."""
    return [m.group(1).strip() for m in BANG_RE.finditer(text) if m.group(1).strip()]
