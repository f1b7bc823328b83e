"""The shapes shell analysis works with, and tree-sitter-bash itself.

`Command` (one simple command, its literal words), `Finding` (what the rules cannot see),
`Line` (what reading a line found), `parse_tree` (the grammar, fed ASCII only) and the small
helpers the readers share.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache

from tree_sitter import Language, Node, Parser

CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
SENSITIVE_VARS = frozenset(
    "PATH IFS ENV BASH_ENV SHELLOPTS BASHOPTS GLOBIGNORE PS4 PROMPT_COMMAND CDPATH HOME "
    "PAGER EDITOR VISUAL SHELL PYTHONPATH PYTHONSTARTUP NODE_OPTIONS PERL5OPT PERL5LIB "
    "RUBYOPT RUBYLIB".split()
)
RUNS_LATER_RE = re.compile(  # git hooks and config, the session's own rules
    r"(^|[/\s=<>])\.git/(hooks|config|info/attributes)\b|(^|[/\s=<>])\.agent-cli/"
    r"|\.gitattributes\b"
)
SENSITIVE_PREFIXES = ("LD_", "DYLD_", "GIT_", "BASH_FUNC_")
HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[.*\])?$", re.DOTALL)
STATEMENTS = frozenset(
    "program list pipeline subshell compound_statement negated_command if_statement "
    "elif_clause else_clause while_statement for_statement do_group case_statement "
    "case_item redirected_statement".split()
)
RESERVED = frozenset("{ } ( ) [[ ]] ! do done then fi elif else esac in".split())
REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
TOKENS = frozenset(  # punctuation and keywords a statement may contain
    "; & \n | |& && || ( ) { } ! if then else elif fi while until do done for select in "
    "case esac function (( ))".split(" ")
) | {"\n"}


@cache
def _language() -> Language:
    import tree_sitter_bash

    return Language(tree_sitter_bash.language())


def parse_tree(raw: bytes) -> Node:
    """The tree-sitter-bash syntax tree of UTF-8 `raw` (its root node). Every byte past ASCII
    is parsed as `a`: bash treats them all as word characters, and the grammar's scanner
    crashes on some code points (U+F0000, ...). Byte offsets stay those of `raw`."""
    safe = raw.translate(_ASCII_ONLY)
    return Parser(_language()).parse(safe).root_node


_ASCII_ONLY = bytes(b if b < 0x80 else ord("a") for b in range(256))


@dataclass(frozen=True)
class Command:
    """One simple command. `words` are literal up to the first word decided at run time."""

    words: tuple[str, ...]
    complete: bool  # True: `words` is the whole argv
    shown: str  # how to name it in a message
    redirects: tuple[str, ...] = ()  # redirections that read or write files ("> out.txt")
    assigns: tuple[str, ...] = ()  # NAME=... before the command word
    via: str = ""  # how it was reached: "timeout", "bash -c", "find -exec" (empty: as written)


@dataclass(frozen=True)
class Finding:
    """Why the rules cannot see everything a line runs. `strict`: no allow rule with a
    specifier covers the line at all (it changes what later commands mean); otherwise it
    only stops auto-allowing while a deny rule exists."""

    reason: str
    strict: bool = False


@dataclass
class Line:
    """What `read_line` found: the commands in source order and the findings."""

    text: str
    commands: list[Command] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    stdin_code: dict[int, str] = field(default_factory=dict)  # index -> literal code on stdin
    single: bool = False  # the whole line is one simple command node
    raw: bytes = b""  # the line as UTF-8: node byte ranges index into it

    def unreadable(self, why: str) -> None:
        self.findings.append(Finding(f"the shell grammar cannot read this command ({why})", True))


@dataclass(frozen=True)
class Word:
    text: str | None  # None: decided at run time


def shape(text: str) -> str:
    return text if len(text) <= 80 else text[:77] + "..."


def unescape_unquoted(raw: str, line: Line) -> str:
    out: list[str] = []
    i = 0
    while i < len(raw):
        c = raw[i]
        if c == "\\":
            if i + 1 >= len(raw):
                line.unreadable("a trailing backslash")
                return "".join(out)
            if raw[i + 1] != "\n":
                out.append(raw[i + 1])
            i += 2
            continue
        if c in "\n \t":
            line.unreadable("blank space inside a word")
        out.append(c)
        i += 1
    return "".join(out)


def gaps_ok(node: Node, raw: bytes, newlines: bool) -> bool:
    """Is everything between `node`'s children blank (so no character was dropped)? `raw`
    is the whole line; only the gaps are sliced (a long line nests many list nodes)."""
    pos = node.start_byte
    allowed = b" \t\n" if newlines else b" \t"
    for child in [*node.children, None]:
        end = child.start_byte if child is not None else node.end_byte
        gap = raw[pos:end].replace(b"\\\n", b"")
        if gap.strip(allowed):
            return False
        if child is not None:
            pos = child.end_byte
    return True


def unescape_double(raw: str, line: Line) -> str:
    if "`" in raw or "$(" in raw:
        line.unreadable("a substitution the grammar did not see")
    out: list[str] = []
    i = 0
    while i < len(raw):
        c = raw[i]
        if c == "\\" and i + 1 < len(raw) and raw[i + 1] in '$`"\\\n':
            if raw[i + 1] != "\n":
                out.append(raw[i + 1])
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)



def descendants(node: Node) -> list[Node]:
    out, stack = [], list(node.named_children)
    while stack:
        n = stack.pop()
        out.append(n)
        stack.extend(n.named_children)
    return out

