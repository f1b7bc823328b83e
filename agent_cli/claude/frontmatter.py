"""The YAML frontmatter of Claude Code's Markdown files, read by a small strict parser:
`key: value` lines between a `---` first line and the next `---` line, nothing nested.

Values may be quoted ('x' or "x"); a list is either comma-separated (`tools: Read, Grep`) or
a flow list (`[Read, Grep]`). A line that is not `key: value` (an indented block, a YAML
list item) is reported, never guessed at.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

KEY_RE = re.compile(r"^([A-Za-z][A-Za-z0-9_-]*)\s*:\s*(.*)$")


class FrontmatterError(ValueError):
    """The frontmatter cannot be read: the message names the line."""


@dataclass
class Document:
    """A Markdown file split into its frontmatter fields and its body."""

    fields: dict[str, str] = field(default_factory=dict)
    body: str = ""

    def text(self, key: str) -> str:
        return self.fields.get(key, "").strip()

    def items(self, key: str) -> list[str]:
        """A list field: `a, b` or `[a, b]`, each item unquoted; [] when absent."""
        raw = self.text(key)
        if raw.startswith("[") and raw.endswith("]"):
            raw = raw[1:-1]
        return [_unquote(p.strip()) for p in _split_commas(raw) if p.strip()]


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _split_commas(raw: str) -> list[str]:
    """Split on commas outside parentheses (`Bash(git add:*), Read`)."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(raw):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        elif ch == "," and depth == 0:
            parts.append(raw[start:i])
            start = i + 1
    parts.append(raw[start:])
    return parts


def parse(text: str) -> Document:
    """Split `text` into frontmatter and body; FrontmatterError for a malformed header."""
    text = text.removeprefix("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return Document(body=text)
    fields: dict[str, str] = {}
    for number, line in enumerate(lines[1:], start=2):
        stripped = line.strip()
        if stripped == "---":
            return Document(fields, "".join(lines[number:]))
        if not stripped or stripped.startswith("#"):
            continue
        m = KEY_RE.match(line.rstrip("\r\n"))
        if m is None or line[:1].isspace():
            raise FrontmatterError(f"line {number}: not a `key: value` line: {stripped[:60]!r}")
        key, value = m.group(1), m.group(2).strip()
        if key in fields:
            raise FrontmatterError(f"line {number}: {key} is set twice")
        fields[key] = _unquote(value)
    raise FrontmatterError("the frontmatter opened by --- on line 1 is never closed")
