"""Running a custom slash command (claude/commands.py) as a lead turn, in the REPL and -p.

`command_turn(runtime, line)` finds the command a `/name args` line names (None: not one).
Its `prepare(agent)` runs on the lead's turn thread, before the prompt is sent: each
`` !`cmd` `` snippet runs as the lead's shell tool (the permission gate decides: the REPL asks,
a headless run lets the rules decide, a denial is said in the prompt), and each `@path` is read
with read_file (the same confinement and rules); the outputs replace the snippets and follow
the text. `scope(agent)` wraps that one turn: the frontmatter's `model` for it, and
`allowed-tools` as a narrowing: the turn is offered only the tools named there (Claude Code's
names mapped to agent-cli's). It grants nothing: every call still passes the rules and asks as
usual, since a command file may come with a repository. After the turn both are put back.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..claude.commands import CommandSet, CustomCommand, bang_commands, file_refs, load_commands
from ..claude.names import is_claude_model, model_name, tool_names
from ..claude.paths import claude_home
from ..events import Notice
from .headless_stdin import STDIN_MARK


def command_set(runtime: Any) -> CommandSet:
    """The custom commands of this workdir and user, read now."""
    user_dir = runtime.settings.layer("user").path.parent
    return load_commands(Path(runtime.workdir), claude_home(), user_dir)


@dataclass
class CommandTurn:
    """A custom command called with its arguments, ready to become one lead turn."""

    runtime: Any
    command: CustomCommand
    arguments: str
    piped: str = ""  # a -p run's <stdin> block: follows the prompt, never searched

    @property
    def shown(self) -> str:
        return f"{self.command.name} {self.arguments}".strip()

    def prepare(self, agent: Any) -> str:
        """The prompt: the body with its arguments, snippets' outputs and files' contents."""
        text = self.command.expand(self.arguments)
        for cmd in bang_commands(text):
            out = agent.run_tool("shell", {"command": cmd}, purpose=self.command.name)
            result = (out.content if not out.is_error or "[exit" in out.content
                      else f"(not run: {out.content})")
            text = text.replace(f"!`{cmd}`", f"\n<command-output command=\"{_attr(cmd)}\">\n"
                                f"{result.rstrip()}\n</command-output>\n", 1)
        files = []
        for ref in file_refs(text):
            out = agent.run_tool("read_file", {"path": ref}, purpose=self.command.name)
            body = out.content if not out.is_error else f"(not read: {out.content})"
            files.append(f"<file path=\"{_attr(ref)}\">\n{body.rstrip()}\n</file>")
        if files:
            text += "\n\n" + "\n".join(files)
        return text + self.piped

    @contextmanager
    def scope(self, agent: Any) -> Iterator[None]:
        """This turn with the command's model and only its allowed tools."""
        model, tools = agent.model, agent.tools
        try:
            name = command_model(self.runtime, self.command)
            if name:
                agent.model = self.runtime.make_model("lead", name)
            if self.command.allowed_tools:
                from ..tools.base import ToolSet  # the tools' models: not before the prompt

                keep, unknown = tool_names(self.command.allowed_tools, tools.names())
                agent.tools = ToolSet([t for t in tools if t.name in keep])
                if unknown:
                    self.runtime.events.emit(Notice("lead", (
                        f"{self.command.name}: allowed-tools names no tool here: "
                        f"{', '.join(unknown)}"), level="warning"))
            yield
        finally:
            agent.model, agent.tools = model, tools


def command_model(runtime: Any, command: CustomCommand) -> str | None:
    """The Claude model a command's `model` names (claude/names.py), or None: none given,
    not a Claude model name (a file never picks `demo` or a script), or a session on the
    offline or scripted model (said once; it never turns into a call to the API)."""
    name, problem = model_name(command.model)
    if name is not None and runtime.config.model_factory is None and not is_claude_model(
            runtime.model_spec()):
        name, problem = None, (f"model {command.model.strip()!r} not used: this session runs "
                               f"on {runtime.model_spec()}")
    if problem:
        runtime.events.emit(Notice("lead", f"{command.name}: {problem}", level="warning"))
    return name


def _attr(text: str) -> str:
    return text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


def command_turn(runtime: Any, line: str, commands: CommandSet | None = None
                 ) -> CommandTurn | None:
    """The CommandTurn a `/name args` line calls, or None when it names no custom command."""
    head, mark, tail = line.partition(STDIN_MARK)  # piped text is data: no !`cmd`, no @file
    text = head.strip()
    if not text.startswith("/"):
        return None
    name, *rest = text.split(None, 1)
    found = (commands or command_set(runtime)).get(name)
    if found is None:
        return None
    return CommandTurn(runtime, found, rest[0].strip() if rest else "", mark + tail)


def completion_help(runtime: Any, builtins: dict[str, str]) -> dict[str, str]:
    """Tab completion's `/name -> description`: the custom commands, then the built-ins
    (a built-in wins over a file of the same name)."""
    try:
        found = command_set(runtime).commands.values()
    except OSError:
        found = []
    custom = {c.name: " ".join(p for p in (c.argument_hint, c.description) if p)
              for c in found}
    return {**custom, **builtins}


def help_lines(runtime: Any, builtins: set[str]) -> list[tuple[str, str]]:
    """/help's rows for the custom commands (usage, description and file) and what is
    hidden or could not be read."""
    found = command_set(runtime)
    rows = []
    for c in sorted(found.commands.values(), key=lambda c: c.name):
        usage = f"{c.name} {c.argument_hint}".strip()
        if c.name in builtins:
            rows.append((usage, f"hidden: the built-in {c.name} wins over {c.path}"))
            continue
        rows.append((usage, f"{c.description} ({c.origin}: {_home_short(c.path)})"))
    rows += [("", f"hidden: {line}") for line in found.shadowed]
    rows += [("", f"not loaded: {line}") for line in found.problems]
    return rows


def _home_short(path: Path) -> str:
    try:
        return "~/" + str(path.relative_to(Path.home()))
    except ValueError:
        return str(path)
