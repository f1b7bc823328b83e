"""Showing an approval request and reading the human's answer.

`approval_panel` says who asks and why ("alice wants to run `python main.py` — task #3
verify"; "alice@host-b" and a line naming the host for a teammate on another machine), why
a rule that names the command could not allow it ("asks because `bash -c` runs code the
rules cannot see"), shows the command or a coloured diff, and the three choices.
`ApprovalPrompter` reads one key (1/2/3; esc or Ctrl-C means no) and, for "no", what the
agent should do differently. Only the UI thread calls it: no agent has a tool that answers a
permission prompt.
"""

from __future__ import annotations

from typing import Any

from prompt_toolkit import PromptSession
from prompt_toolkit.formatted_text import ANSI
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.keys import Keys
from rich.console import Group
from rich.panel import Panel
from rich.text import Text

from ..safetext import unsafe_count, visible
from .style import agent_style, marked

VERBS = {"shell": "run", "write_file": "write", "edit_file": "edit", "read_file": "read",
         "grep": "search", "glob": "list files in"}


def headline(req: Any, why: str = "") -> Text:
    """"alice wants to run `python main.py` — task #3 verify"."""
    verb = VERBS.get(req.tool) or ("call" if req.tool.startswith("mcp__") else
                                   f"use {req.tool} on")
    line = Text.assemble((req.agent, agent_style(req.agent)))
    host = getattr(req, "host", "")
    if host:  # a teammate on another machine (its request came through the database)
        line.append(f"@{visible(host, one_line=True)}", style="bold")
    line.append(f" wants to {verb} ")
    line.append(Text("`", style="bold") + marked(req.summary or req.tool)
                + Text("`", style="bold"))
    why = visible(why or req.purpose, one_line=True)
    if why:
        line.append(f" {why}" if why.startswith("(") else f" — {why}")  # (in a worktree)
    return line


def hidden_warning(req: Any) -> Text | None:
    """A line saying the request carries characters a terminal would interpret or hide."""
    count = max(unsafe_count(req.summary or ""), unsafe_count(req.preview or ""))
    if not count:
        return None
    return Text(f"⚠ contains {count} control or invisible character"
                f"{'s' if count != 1 else ''}, shown as escapes like \\x1b: this is the "
                "exact text that runs", style="bold red")


def preview_text(req: Any, limit: int = 40) -> Text | None:
    """The command, or the diff with + lines green and - lines red (at most `limit` lines)."""
    body = (req.preview or "").rstrip("\n")
    if not body or body.strip() == (req.summary or "").strip():
        return None
    lines = body.split("\n")  # not splitlines(): \x1c, \x85, \u2028 ... are shown
    cut = len(lines) - limit
    out = Text()
    for raw in lines[:limit]:
        line = marked(raw)
        style = ""
        if raw.startswith("+") and not raw.startswith("+++"):
            style = "green"
        elif raw.startswith("-") and not raw.startswith("---"):
            style = "red"
        elif raw.startswith("@@"):
            style = "cyan"
        if style:
            line.stylize(style)
        out.append(line + "\n")
    if cut > 0:
        out.append(f"… {cut} more lines\n", style="dim")
    out.rstrip()
    return out


def choices(req: Any) -> Text:
    text = Text()
    text.append("  1 ", style="bold")
    text.append("Yes\n")
    text.append("  2 ", style="bold")
    if req.suggested_rule:
        text.append("Yes, and don't ask again for ")
        text.append(marked(req.suggested_rule))
        text.stylize("bold cyan", len(text) - len(visible(req.suggested_rule)), len(text))
        text.append(" (saves it to .agent-cli/settings.local.json)\n")
    else:
        text.append("Yes (no rule can cover this; same as 1)\n")
    text.append("  3 ", style="bold")
    text.append(f"No, and tell {req.agent} what to do differently\n")
    return text


def approval_panel(req: Any, queued: int = 0, why: str = "") -> Panel:
    parts: list[Any] = [headline(req, why)]
    warning = hidden_warning(req)
    if warning is not None:
        parts.append(warning)
    host = getattr(req, "host", "")
    if host:
        parts.append(Text(f"from host {visible(host, one_line=True)}: a teammate on another "
                          "machine, running there under that host's own rules and sandbox",
                          style="dim"))
    reason = getattr(req, "reason", "")
    if reason:  # a rule named the command, but cannot allow it: say why
        parts.append(Text(visible(reason), style="yellow"))
    preview = preview_text(req)
    if preview is not None:
        parts.append(Text(""))
        parts.append(preview)
    parts += [Text(""), choices(req)]
    title = "Permission needed" + (f" ({queued} more waiting)" if queued else "")
    return Panel(Group(*parts), title=title, title_align="left", border_style="yellow")


SUBMIT = "\r"  # in the kept typing: an Enter (a pasted line break is "\n")


def choice_bindings(typed: list[str] | None = None) -> KeyBindings:
    """1/2/3 answer; esc, Ctrl-C and Ctrl-D say no. Anything else was meant for the prompt
    the question interrupted: printable keys, pastes and Enter (as SUBMIT) are kept in
    `typed`, in order, and never answer."""
    kb = KeyBindings()
    # Digits only: a letter typed by habit must never approve anything.
    for key in ("1", "2", "3"):

        @kb.add(key)
        def _(event: Any, result: str = key) -> None:
            event.current_buffer.insert_text(result)  # the answer stays on screen
            event.app.exit(result=result)

    @kb.add("escape", eager=True)
    @kb.add("c-c")
    @kb.add("c-d")
    def _(event: Any) -> None:
        event.current_buffer.insert_text("no")
        event.app.exit(result="esc")

    @kb.add(Keys.Any)
    def _(event: Any) -> None:  # never an answer; handed back to the interrupted prompt
        if typed is not None and event.data.isprintable():
            typed.append(event.data)

    @kb.add(Keys.BracketedPaste)
    def _(event: Any) -> None:
        if typed is not None:
            text = event.data.replace("\r\n", "\n").replace("\r", "\n")
            typed.append("".join(c for c in text if c.isprintable() or c in "\n\t"))

    @kb.add("enter")
    def _(event: Any) -> None:  # a line finished at the question: sent once it is answered
        if typed is not None:
            typed.append(SUBMIT)

    return kb


class ApprovalPrompter:
    """Reads answers to approval requests with prompt_toolkit (the UI thread only)."""

    def __init__(self, input: Any = None, output: Any = None, color: bool = True) -> None:
        self.input = input
        self.output = output
        self.color = color
        self._typed: list[str] = []  # keys typed at a question that were not an answer

    def take_typed(self) -> str:
        """What the user typed at the questions without answering (then forgotten); each
        Enter pressed there is a SUBMIT."""
        text, self._typed = "".join(self._typed), []
        return text

    def _session(self, **kw: Any) -> PromptSession:
        # No completion menu here, so no rows kept free below the question.
        return PromptSession(input=self.input, output=self.output, reserve_space_for_menu=0,
                             **kw)

    def ask(self, req: Any) -> Any:
        """Read the choice for `req` (its panel is already on screen); an ApprovalAnswer."""
        from ..permissions.broker import ApprovalAnswer

        session = self._session(key_bindings=choice_bindings(self._typed))
        choice = session.prompt(ANSI("\x1b[1mChoose 1, 2 or 3:\x1b[0m "))
        if choice == "1":
            return ApprovalAnswer("allow_once")
        if choice == "2":
            if not req.suggested_rule:
                return ApprovalAnswer("allow_once")
            return ApprovalAnswer("allow_always", save=True)  # to the local settings layer
        feedback = ""
        if choice == "3":
            feedback = self._session().prompt(
                f"What should {req.agent} do instead? (Enter to just say no) "
            ).strip()
        return ApprovalAnswer("deny", feedback=feedback)


def outcome_line(req: Any, answer: Any) -> Text:
    """One line recording what was decided, printed after the question."""
    who = Text(f"{req.agent} ", style=agent_style(req.agent))
    summary = visible(req.summary or req.tool)
    if answer.decision == "allow_once":
        return who + Text(f"allowed: {summary}", style="green")
    rule = visible(req.suggested_rule or "")
    if answer.decision == "allow_always":
        line = who + Text(f"allowed; rule added: {rule}", style="green")
        if answer.save:
            return line + Text(" (saved to .agent-cli/settings.local.json)", style="dim")
        return line + Text(f" (this session)\n  to keep it: /permissions save {rule}",
                           style="dim")
    said = f" — told: {visible(answer.feedback)}" if answer.feedback else ""
    return who + Text(f"denied: {summary}{said}", style="red")
