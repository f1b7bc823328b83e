"""A shell command line as the permission rules see it: every command it runs, and why the
rules might not see all of it.

`analyze(text)` = shell_syntax.read_line (the commands as written, word by word) +
shell_unwrap.unwrap for each (what it runs through wrappers), with code handed to a shell
(`bash -c '...'`, `eval`, a here-string into `sh`) read in turn, so a deny rule still sees
`rm` three levels down. Findings say what the rules cannot see; a line with findings is
never auto-allowed while a deny rule exists (shell_verdict decides).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .shell_syntax import MAX_DEPTH, Command, Finding, read_line
from .shell_unwrap import unwrap


@dataclass(frozen=True)
class Run:
    """One command of the line as written, and what it runs in turn."""

    written: Command
    inner: tuple[Command, ...] = ()  # through wrappers and code: deny rules see these too
    allowable: tuple[Command, ...] = ()  # forms an allow rule may match (written first)


@dataclass(frozen=True)
class ShellAnalysis:
    text: str
    runs: tuple[Run, ...]
    findings: tuple[Finding, ...]
    single: bool = False  # the line is one command node (nothing else, not even `x=1;`)

    @property
    def simple(self) -> bool:
        """One literal command, no redirection, assignment or finding: what a rule names."""
        if len(self.runs) != 1 or self.findings or not self.single:
            return False
        w = self.runs[0].written
        return w.complete and bool(w.words) and not w.redirects and not w.assigns

    @property
    def words(self) -> tuple[str, ...] | None:
        return self.runs[0].written.words if self.simple else None

    @property
    def reason(self) -> str:
        """Why the line is not one simple command ("" when it is)."""
        if self.simple:
            return ""
        if self.findings:
            return self.findings[0].reason
        if not self.runs:
            return "empty command"
        if len(self.runs) > 1:
            return "several commands"
        w = self.runs[0].written
        if w.redirects:
            return f"redirection `{w.redirects[0]}`"
        if w.assigns:
            return "leading variable assignment"
        return "words decided at run time"

    def forms(self) -> list[Command]:
        """Every command deny rules are matched against."""
        return [c for run in self.runs for c in (run.written, *run.inner)]


def _chain(via: str, form: Command) -> Command:
    return replace(form, via=f"{via} -> {form.via}" if form.via else via)


def analyze(text: str, depth: int = 0) -> ShellAnalysis:
    """Read `text` (never raises; see the module docstring)."""
    line = read_line(text, depth)
    findings = list(line.findings)
    runs: list[Run] = []
    for index, cmd in enumerate(line.commands):
        u = unwrap(cmd, line.stdin_code.get(index))
        findings += u.findings
        inner = list(u.inner)
        for via, code in u.code:
            if depth + 1 > MAX_DEPTH:
                findings.append(Finding("code nested too deeply", True))
                continue
            sub = analyze(code, depth + 1)
            inner += [_chain(via, form) for form in sub.forms()]
        runs.append(Run(cmd, tuple(inner), (cmd, *u.allowable)))
    seen: set[str] = set()
    unique = [f for f in findings if not (f.reason in seen or seen.add(f.reason))]
    return ShellAnalysis(text, tuple(runs), tuple(unique), line.single)
