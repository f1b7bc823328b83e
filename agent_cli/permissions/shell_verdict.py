"""Deciding a shell command against Bash allow and deny rules: allow, deny, or ask and why.

Deny first: a deny rule that matches anything the line runs (as written, through a wrapper,
inside code given to a shell, `/bin/rm` as `rm`) denies it. Then a line is auto-allowed only
when every command it runs as written is matched by an allow rule (the bare `Bash` rule
covers them all), and so is every command those start in turn (`find -exec rm`, `xargs rm`,
`sudo rm`, `bash -c 'rm x'`: a rule naming the carrier does not stretch to its cargo; only
the transparent wrappers -- `timeout`, `nice`, ... -- pass their rule on), with no
redirection to a file, assignment or finding that the rule does not cover, and -- while any
Bash deny rule exists -- nothing the rules cannot see and no word decided at run time that
could turn a command into one a deny rule names. Otherwise it asks; `reason` says why when
an allow rule would have matched what was written.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from .shell_analysis import ShellAnalysis
from .shell_model import Command

Effect = Literal["allow", "deny", "ask"]


@dataclass(frozen=True)
class ShellVerdict:
    effect: Effect
    entry: Any = None  # the RuleEntry that decided (allow or deny), if any
    reason: str = ""  # deny: what matched; ask: why no rule could allow it
    unseen: str = ""  # ask: why a deny rule might match something it runs ("" if none can)


def _variants(cmd: Command) -> list[tuple[str, ...]]:
    words = cmd.words
    if words and "/" in words[0]:
        return [words, (words[0].rsplit("/", 1)[1], *words[1:])]
    return [words]


def definitely(rule_words: tuple[str, ...], prefix: bool, cmd: Command) -> bool:
    """Does the rule match `cmd` whatever its run-time words turn out to be?"""
    for words in _variants(cmd):
        n = len(rule_words)
        if len(words) >= n and words[:n] == rule_words:
            if prefix or (cmd.complete and len(words) == n):
                return True
    return False


def possibly(rule_words: tuple[str, ...], prefix: bool, cmd: Command) -> bool:
    """Could the rule match `cmd` once its run-time words are known?"""
    if cmd.complete:
        return definitely(rule_words, prefix, cmd)
    for words in _variants(cmd):
        k = min(len(words), len(rule_words))
        if words[:k] != rule_words[:k]:
            continue
        if not prefix and len(words) > len(rule_words):
            continue
        return True
    return False


def _matches(entry: Any, cmd: Command, how: str = "definitely") -> bool:
    rule = entry.parsed
    if rule.spec is None:
        return True
    test = definitely if how == "definitely" else possibly
    return test(rule.words, rule.prefix, cmd)


def _how(cmd: Command) -> str:
    return f" (through `{cmd.via}`)" if cmd.via else ""


def _deny(analysis: ShellAnalysis, denies: list[Any]) -> ShellVerdict | None:
    for entry in denies:
        if entry.parsed.spec is None:
            return ShellVerdict("deny", entry, "every shell command is denied")
    for form in analysis.forms():
        for entry in denies:
            if _matches(entry, form):
                return ShellVerdict("deny", entry, f"it runs `{form.shown}`{_how(form)}")
    return None


def _unseen(analysis: ShellAnalysis, denies: list[Any]) -> str:
    """Why a deny rule might match something the line runs ("" when none can)."""
    if not denies:
        return ""
    for form in analysis.forms():
        for entry in denies:
            if _matches(entry, form, "possibly") and not _matches(entry, form):
                if not form.words:
                    return f"`{form.shown}` runs a command decided at run time"
                return (
                    f"`{form.shown}` has words decided at run time that could make it "
                    f"match {entry.rule}"
                )
    if analysis.findings:
        return analysis.findings[0].reason
    return ""


def _uncovered(run: Any, allows: list[Any]) -> Command | None:
    """A command `run` starts in turn (find -exec, xargs, sudo, code given to a shell) that
    no allow rule covers: the rule naming the carrier does not stretch to what it carries."""
    riding = {(c.words, c.complete, c.via) for c in run.allowable}
    for cmd in run.inner:
        if (cmd.words, cmd.complete, cmd.via) in riding:
            continue
        if not any(_matches(entry, cmd) for entry in allows):
            return cmd
    return None


def _run_allowed(run: Any, allows: list[Any]) -> tuple[Any, str]:
    """(the allow rule covering this run, or None; why not when a rule named it)."""
    why = ""
    for form in run.allowable:
        for entry in allows:
            if not _matches(entry, form):
                continue
            carried = _uncovered(run, allows)
            if carried is not None:
                why = why or f"`{carried.shown}` (run by `{run.written.shown}`) is not allowed"
            elif form.redirects:
                why = why or f"the redirection `{form.redirects[0]}` is not covered by {entry.rule}"
            elif form.assigns:
                why = why or f"`{form.assigns[0]}=...` before the command is not covered by a rule"
            else:
                return entry, ""
    return None, why


def judge(analysis: ShellAnalysis, allows: list[Any], denies: list[Any]) -> ShellVerdict:
    """The verdict on one command line (see the module docstring). `allows` / `denies` are
    RuleEntry objects of the Bash family, in order."""
    denied = _deny(analysis, denies)
    if denied is not None:
        return denied
    unseen = _unseen(analysis, denies)
    bare = next((e for e in allows if e.parsed.spec is None), None)
    if bare is not None:
        return ShellVerdict("ask", bare, unseen, unseen) if unseen else ShellVerdict("allow", bare)
    strict = next((f.reason for f in analysis.findings if f.strict), "")
    covered: list[Any] = []
    missing = ""
    for run in analysis.runs:
        entry, why = _run_allowed(run, allows)
        if entry is None:
            missing = missing or why or f"`{run.written.shown}` is not allowed by any rule"
        else:
            covered.append(entry)
    if covered and not missing and not strict and not unseen and analysis.runs:
        return ShellVerdict("allow", covered[0])
    named = bool(covered) or any(
        _matches(e, f) for run in analysis.runs for f in run.allowable for e in allows
    )
    if not named:  # still say what a deny rule might match: the human should know
        return ShellVerdict("ask", None, unseen, unseen)
    entry = covered[0] if covered else None
    return ShellVerdict("ask", entry, unseen or strict or missing, unseen)
