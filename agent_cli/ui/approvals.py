"""Showing an approval request and reading the human's answer.

`approval_panel` says who asks and why ("alice wants to run `python main.py` — task #3
verify"), why a rule that names the command could not allow it ("asks because `bash -c`
runs code the rules cannot see"), shows the command or a coloured diff, and the three choices.
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

from .style import agent_style

VERBS = {"shell": "run", "write_file": "write", "edit_file": "edit", "read_file": "read",
         "grep": "search", "glob": "list files in"}


def headline(req: Any, why: str = "") -> Text:
    """"alice wants to run `python main.py` — task #3 verify"."""
    verb = VERBS.get(req.tool) or ("call" if req.tool.startswith("mcp__") else
                                   f"use {req.tool} on")
    line = Text.assemble((req.agent, agent_style(req.agent)), f" wants to {verb} ")
    line.append(f"`{req.summary or req.tool}`", style="bold")
    why = why or req.purpose
    if why:
        line.append(f" {why}" if why.startswith("(") else f" — {why}")  # (in a worktree)
    return line


def preview_text(req: Any, limit: int = 40) -> Text | None:
    """The command, or the diff with + lines green and - lines red (at most `limit` lines)."""
    body = (req.preview or "").rstrip("\n")
    if not body or body.strip() == (req.summary or "").strip():
        return None
    lines = body.splitlines()
    cut = len(lines) - limit
    out = Text()
    for raw in lines[:limit]:
        style = ""
        if raw.startswith("+") and not raw.startswith("+++"):
            style = "green"
        elif raw.startswith("-") and not raw.startswith("---"):
            style = "red"
        elif raw.startswith("@@"):
            style = "cyan"
        out.append(raw + "\n", style=style)
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
        text.append(req.suggested_rule, style="bold cyan")
        text.append(" (saves it to .agent-cli/settings.local.json)\n")
    else:
        text.append("Yes (no rule can cover this; same as 1)\n")
    text.append("  3 ", style="bold")
    text.append(f"No, and tell {req.agent} what to do differently\n")
    return text


def approval_panel(req: Any, queued: int = 0, why: str = "") -> Panel:
    parts: list[Any] = [headline(req, why)]
    reason = getattr(req, "reason", "")
    if reason:  # a rule named the command, but cannot allow it: say why
        parts.append(Text(reason, style="yellow"))
    preview = preview_text(req)
    if preview is not None:
        parts.append(Text(""))
        parts.append(preview)
    parts += [Text(""), choices(req)]
    title = "Permission needed" + (f" ({queued} more waiting)" if queued else "")
    return Panel(Group(*parts), title=title, title_align="left", border_style="yellow")


def choice_bindings(typed: list[str] | None = None) -> KeyBindings:
    """1/2/3 answer; esc, Ctrl-C and Ctrl-D say no; Enter does nothing. Any other printable
    key was meant for the prompt the question interrupted: it is kept in `typed`."""
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

    @kb.add("enter")
    def _(event: Any) -> None:
        pass

    return kb


class ApprovalPrompter:
    """Reads answers to approval requests with prompt_toolkit (the UI thread only)."""

    def __init__(self, input: Any = None, output: Any = None, color: bool = True) -> None:
        self.input = input
        self.output = output
        self.color = color
        self._typed: list[str] = []  # keys typed at a question that were not an answer

    def take_typed(self) -> str:
        """What the user typed at the questions without answering (then forgotten)."""
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
    if answer.decision == "allow_once":
        return who + Text(f"allowed: {req.summary or req.tool}", style="green")
    if answer.decision == "allow_always":
        line = who + Text(f"allowed; rule added: {req.suggested_rule}", style="green")
        if answer.save:
            return line + Text(" (saved to .agent-cli/settings.local.json)", style="dim")
        return line + Text(f" (this session)\n  to keep it: /permissions save "
                           f"{req.suggested_rule}", style="dim")
    said = f" — told: {answer.feedback}" if answer.feedback else ""
    return who + Text(f"denied: {req.summary or req.tool}{said}", style="red")
