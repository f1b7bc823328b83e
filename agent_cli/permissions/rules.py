"""Permission rules in Claude Code's syntax: parsing, and matching one call against one rule.

Forms:
- `Bash` — every shell command (including compound ones: the user allowed all of shell).
- `Bash(git status)` — exactly that command (compared word by word after shell quoting).
- `Bash(npm run test *)` / `Bash(npm run test:*)` — that prefix, on a word boundary
  (`npm run test`, `npm run test --watch`; not `npm run testx`). `Bash(*)` = any simple command.
- `Read(./.env)`, `Write(src/**)`, `Edit(docs/*.md)`, `Read`, `Write`, `Edit` — gitignore-style
  path patterns (path_rules.py): `path` / `./path` relative to the workdir, `/path` anchored
  at the project root, `~/path` in your home, `//path` absolute. Read rules are enforced by
  read_file, grep and glob (the gate for the path a call names, the tools for every file a
  search meets); Edit / Write rules by edit_file and write_file.
- `mcp__server` / `mcp__server__*` — every tool of that MCP server; `mcp__server__tool` — one.
- `WebSearch`, `WebFetch`, `WebFetch(domain:example.com)` — the API's own web tools
  (models/web_tools.py): allowed ones are offered to the model, denied domains are blocked.
- Claude Code's other tool names: `MultiEdit(...)` is an `Edit` rule (edit_file); a bare
  `Glob` / `Grep` deny or ask rule holds the glob / grep tool (gate.py); `Task`, `Agent`,
  `NotebookEdit` and a `Glob(...)` / `Grep(...)` with a specifier name nothing agent-cli
  has: they are kept and listed, never matched (`Rule.applicable` is False).

Which tools a rule covers: an allow rule `Edit(...)` covers edit_file and write_file (any file
change); `Write(...)` covers write_file only. A deny rule of either family covers both
(deny is meant to be broad). How a shell command line is matched against Bash rules (every
command it runs, through wrappers and code given to shells) is shell_verdict's job.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Literal

from ..errors import UserError
from .path_rules import BadPathPattern, PathPattern, PathTarget, parse_path_pattern

if TYPE_CHECKING:  # tree-sitter: loaded when a Bash rule is parsed or matched
    from .shell_analysis import ShellAnalysis

Family = Literal["Bash", "Write", "Edit", "Read"]
FAMILIES: tuple[str, ...] = ("Bash", "Write", "Edit", "Read", "WebSearch", "WebFetch",
                             "MultiEdit", "Glob", "Grep", "Task", "Agent", "NotebookEdit")
NOT_HERE = ("Task", "Agent", "NotebookEdit")  # Claude Code tools agent-cli does not have
UNREADABLE = "Unreadable"  # a `.claude/` rule agent-cli cannot read: kept, listed, named
SEARCH_TOOLS = {"Glob": "glob", "Grep": "grep"}  # a bare rule holds that tool alone
RULE_RE = re.compile(r"^([A-Za-z]+)(?:\((.*)\))?$", re.DOTALL)


class InvalidRule(UserError):
    """A rule whose text cannot be understood."""


@dataclass(frozen=True)
class Rule:
    """One parsed rule. `spec` is None for a bare family (`Bash`, `Edit`)."""

    text: str
    family: str
    spec: str | None
    prefix: bool = False  # Bash only: `... *` / `...:*`
    words: tuple[str, ...] = ()  # Bash only: the rule's command words

    @cached_property
    def path_pattern(self) -> PathPattern | None:
        if self.family in ("Bash", "Mcp") or self.spec is None or not self.applicable:
            return None
        return parse_path_pattern(self.spec)

    @property
    def applicable(self) -> bool:
        """False for a rule about a tool agent-cli does not have (kept, listed, unmatched)."""
        if self.family in (*NOT_HERE, UNREADABLE):
            return False
        return not (self.family in SEARCH_TOOLS and self.spec is not None)

    def covers(self, permission: str, effect: str) -> bool:
        """Does this rule speak about a tool whose permission kind is `permission`?"""
        if self.family == permission:
            return True
        if permission == "Write" and self.family == "Edit":
            return True
        return effect == "deny" and {self.family, permission} == {"Write", "Edit"}

    def matches(
        self, permission: str, target: str | PathTarget, effect: str = "allow",
        cmd: ShellAnalysis | None = None,
    ) -> bool:
        """Does this rule, alone, decide a call of kind `permission` on `target` (command or
        path: a workdir-relative string or a PathTarget)? For Bash: allow = it auto-allows
        the whole line; deny = it matches something the line runs. `cmd` may carry
        analyze(target) already."""
        if not self.covers(permission, effect):
            return False
        if self.spec is None:
            return True
        if isinstance(target, PathTarget):
            if self.path_pattern is None:
                return False
            return self.path_pattern.matches(target)
        if self.family == "Mcp":
            return mcp_matches(self.spec, target)
        if self.family == "Bash":
            from .shell_analysis import analyze

            return self._matches_command(cmd or analyze(target), effect)
        assert self.path_pattern is not None
        return self.path_pattern.matches(target)

    def _matches_command(self, cmd: ShellAnalysis, effect: str) -> bool:
        from .shell_verdict import judge

        entry = _Alone(self.text, self)
        if effect == "allow":
            return judge(cmd, [entry], []).effect == "allow"
        return judge(cmd, [], [entry]).effect == "deny"


@dataclass(frozen=True)
class _Alone:
    """A rule standing in for a RuleEntry when it is matched on its own."""

    rule: str
    parsed: Rule
    source: str = ""


def _bash_rule(text: str, spec: str) -> Rule:
    prefix = False
    body = spec
    if spec == "*":
        return Rule(text, "Bash", spec, prefix=True, words=())
    for suffix in (":*", " *"):
        if spec.endswith(suffix):
            prefix, body = True, spec[: -len(suffix)]
            break
    if "*" in body:
        raise InvalidRule(
            f"invalid rule {text!r}: a Bash rule may only end with ' *' or ':*' as a wildcard"
        )
    from .shell_analysis import analyze
    from .shell_syntax import read_line

    # Only the syntax decides whether a rule is well formed: what the named command would do
    # with more words (`Bash(let *)`, `Bash(git rebase *)`) is judged on each real line.
    line = read_line(body)
    strict = [f for f in line.findings if f.strict]
    run = line.commands[0] if len(line.commands) == 1 else None
    if strict or run is None or not run.complete or run.redirects or run.assigns or not run.words:
        raise InvalidRule(
            f"invalid rule {text!r}: a Bash rule names one simple command "
            f"({analyze(body).reason})"
        )
    return Rule(text, "Bash", spec, prefix=prefix, words=run.words)


def _path_rule(text: str, family: str, spec: str) -> Rule:
    try:
        parse_path_pattern(spec)
    except BadPathPattern as exc:
        raise InvalidRule(f"invalid rule {text!r}: {exc}") from None
    return Rule(text, family, spec)


MCP_RULE_RE = re.compile(r"^mcp__([A-Za-z0-9_-]+?)(?:__([A-Za-z0-9_-]+|\*))?$")


def _split_mcp(name: str) -> tuple[str, str | None] | None:
    m = MCP_RULE_RE.match(name)
    if not m:
        return None
    tool = m.group(2)
    return m.group(1), (None if tool in (None, "*") else tool)


def mcp_matches(spec: str, target: str) -> bool:
    """Does the MCP rule `spec` (`mcp__s`, `mcp__s__*`, `mcp__s__t`) cover tool `target`?"""
    rule, call = _split_mcp(spec), _split_mcp(target)
    if rule is None or call is None:
        return False
    return rule[0] == call[0] and (rule[1] is None or rule[1] == call[1])


def unreadable_rule(text: str, why: str) -> Rule:
    """A rule from a `.claude/` file that agent-cli cannot read (`why`): kept and listed,
    matched against nothing, named at start."""
    return Rule(text.strip(), UNREADABLE, why)


def parse_rule(text: object) -> Rule:
    """Parse one rule, or raise InvalidRule with a one-line reason."""
    if not isinstance(text, str):
        raise InvalidRule(f"invalid rule {text!r}: a rule is a string like 'Bash(git status)'")
    stripped = text.strip()
    if stripped.startswith("mcp__"):
        if _split_mcp(stripped) is None:
            raise InvalidRule(
                f"invalid rule {text!r}: MCP rules are mcp__SERVER, mcp__SERVER__* or "
                "mcp__SERVER__TOOL")
        return Rule(stripped, "Mcp", stripped)
    m = RULE_RE.match(stripped)
    if not m:
        raise InvalidRule(
            f"invalid rule {text!r}: expected Tool or Tool(specifier), e.g. 'Bash(git status)'"
        )
    family, spec = m.group(1), m.group(2)
    if family == "MultiEdit":  # Claude Code's multi-edit tool: edit_file here
        family = "Edit"
    if family in NOT_HERE or (family in SEARCH_TOOLS and spec is not None):
        if spec is not None and ("\n" in spec or "\r" in spec):
            raise InvalidRule(f"invalid rule {text!r}: a rule is one line")
        return Rule(stripped, family, spec.strip() if spec is not None else None)
    if family not in FAMILIES:
        raise InvalidRule(
            f"invalid rule {text!r}: unknown tool {family!r} (use one of {', '.join(FAMILIES)})"
        )
    if spec is None:
        return Rule(stripped, family, None)
    spec = spec.strip()
    if not spec:
        raise InvalidRule(f"invalid rule {text!r}: empty parentheses (write {family} alone)")
    if "\n" in spec or "\r" in spec:
        raise InvalidRule(f"invalid rule {text!r}: a rule is one line")
    if family == "Bash":
        return _bash_rule(stripped, spec)
    if family in ("WebSearch", "WebFetch"):
        return _web_rule(stripped, family, spec)
    return _path_rule(stripped, family, spec)


DOMAIN_RE = re.compile(r"^(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*"
                       r"[A-Za-z0-9])?)*$")


def _web_rule(text: str, family: str, spec: str) -> Rule:
    """`WebFetch(domain:example.com)`; WebSearch takes no specifier."""
    domain = spec.removeprefix("domain:").strip().lower()
    if family == "WebSearch" or not spec.startswith("domain:") or not DOMAIN_RE.match(domain):
        raise InvalidRule(f"invalid rule {text!r}: write WebSearch alone, and WebFetch alone or "
                          "as WebFetch(domain:example.com)")
    return Rule(text, family, domain)
