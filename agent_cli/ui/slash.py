"""Slash commands: the registry, the dispatcher and one handler per command.

A handler takes a SlashContext (a rich Console plus the runtime, the lead and the UI
settings) and the argument text, writes to the console and returns a SlashResult, so each one
is tested with Console(file=StringIO()). Misuse is a UserError shown as one red line; an
unknown /command is an error too and never reaches the model.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from rich.console import Console
from rich.text import Text

from ..errors import AgentCliError, UserError
from ..names import check_name
from .render import UiSettings
from .sandbox_view import cmd_sandbox

# The views (tables, hooks_view, memory_view) pull in rich.table and the memory loader: each
# handler imports what it shows, so the first prompt does not wait for them.

MODES = ("default", "acceptEdits", "plan", "bypassPermissions")


class LeadHandle(Protocol):
    agent: Any  # the lead Agent

    @property
    def busy(self) -> bool: ...


@dataclass
class SlashContext:
    console: Console
    runtime: Any
    lead: LeadHandle
    settings: UiSettings


@dataclass
class SlashResult:
    ok: bool = True
    quit: bool = False


Handler = Callable[[SlashContext, str], SlashResult | None]


@dataclass(frozen=True)
class Command:
    name: str
    usage: str
    help: str
    handler: Handler


def teammates(runtime: Any) -> list[Any]:
    return [m for m in runtime.roster.members() if m.name != "lead"]


def _not_busy(ctx: SlashContext, what: str) -> None:
    if ctx.lead.busy:
        raise UserError(f"the lead is working: wait, or press esc to interrupt, then {what}")


# ----- handlers --------------------------------------------------------------------------
def cmd_help(ctx: SlashContext, arg: str) -> None:
    from rich.table import Table

    table = Table.grid(padding=(0, 2))
    for c in COMMANDS.values():
        table.add_row(Text(c.usage, style="bold"), c.help)
    for key, what in KEYS:
        table.add_row(Text(key, style="bold cyan"), what)
    ctx.console.print(table)
    from .custom_commands import help_lines

    custom = help_lines(ctx.runtime, set(COMMANDS) | set(ALIASES))
    if custom:  # a file's text is data: shown, never interpreted as markup
        ctx.console.print(Text("Custom commands (.claude/commands, ~/.claude/commands; a "
                               "built-in of the same name wins):", style="bold"))
        rows = Table.grid(padding=(0, 2))
        for usage, what in custom:
            rows.add_row(Text(usage, style="bold"), Text(what))
        ctx.console.print(rows)


def cmd_tasks(ctx: SlashContext, arg: str) -> None:
    from . import tables

    snap = ctx.runtime.board.snapshot()
    if arg.strip() == "graph":
        from ..board.graph_render import render_text

        ctx.console.print(Text(render_text(snap, width=ctx.console.width)))
        return
    if arg.strip():
        task_id = _task_id(arg)
        by_id = {t.id: t for t in snap.tasks}
        ctx.console.print(tables.task_detail(ctx.runtime.board.get(task_id), by_id))
        return
    from ..team.assignments import marks

    stranded = marks(ctx.runtime, snap.tasks)
    try:
        places = ctx.runtime.worktrees.places()  # worktree, landed, landing refused
    except AgentCliError:
        places = {}
    ctx.console.print(tables.tasks_table(list(snap.tasks), list(snap.problems), stranded,
                                         places))


def _task_id(arg: str) -> int:
    text = arg.strip().lstrip("#")
    if not text.isdigit():
        raise UserError(f"not a task id: {arg.strip()!r} (use /tasks 3 or /tasks graph)")
    return int(text)


def cmd_team(ctx: SlashContext, arg: str) -> None:
    from . import tables

    snap = ctx.runtime.roster.snapshot()
    lead = ctx.lead.agent
    retries = ctx.runtime.retries.waiting()
    state = "working" if ctx.lead.busy else "idle"
    lead_row = (f"{state}, {retries['lead']}" if "lead" in retries else state, lead.usage.total)
    members = [  # a teammate waiting to retry its model call says so where its reason goes
        m.model_copy(update={"idle_reason": retries[m.name]}) if m.name in retries else m
        for m in snap.members
        if m.name != "lead"
    ]
    ctx.console.print(tables.team_table(lead_row, members, ctx.runtime.roster.gone_reason))
    sandbox = getattr(ctx.runtime, "sandbox", None)
    ran = sandbox.counts() if sandbox is not None and sandbox.enabled else {}
    if ran:
        ctx.console.print(Text("sandboxed commands: " + ", ".join(
            f"{name} {n}" for name, n in sorted(ran.items())), style="dim"))
    if snap.problem:
        ctx.console.print(Text(f"team config unreadable: {snap.problem}", style="red"))
    elif not members:
        ctx.console.print(Text("No teammates yet: ask the lead, or /spawn NAME ROLE.", style="dim"))


def cmd_inbox(ctx: SlashContext, arg: str) -> None:
    from . import tables

    ctx.console.print(tables.inbox_table(ctx.runtime.mail.peek("lead")))


def cmd_compact(ctx: SlashContext, arg: str) -> None:
    _not_busy(ctx, "/compact")
    if ctx.lead.agent.compact("manual"):
        ctx.console.print("Compacted the lead's conversation.")
    else:
        ctx.console.print("Nothing to compact yet.")


def cmd_clear(ctx: SlashContext, arg: str) -> None:
    _not_busy(ctx, "/clear")
    ctx.lead.agent.clear()
    hooks = getattr(ctx.lead, "hooks", None)
    if hooks is not None:  # SessionEnd "clear", SessionStart "clear"
        hooks.cleared()
    ctx.console.print("Started a fresh conversation with the lead; the board and team stay.")


def cmd_model(ctx: SlashContext, arg: str) -> None:
    name = arg.strip()
    if not name:
        from .model_view import show_models

        show_models(ctx.console, ctx.lead.agent.model)
        return
    _not_busy(ctx, "/model")
    ctx.lead.agent.model = ctx.runtime.make_model("lead", name)
    ctx.console.print(f"lead model is now {ctx.lead.agent.model.name}")


PERMISSION_USAGE = ("usage: /permissions [allow|deny|ask RULE [--save] | "
                    "save RULE | remove RULE]")
SAVE_FLAG = "--save"


def cmd_permissions(ctx: SlashContext, arg: str) -> None:
    policy = ctx.runtime.policy
    words = arg.split(None, 1)
    if not words:
        from . import tables

        ctx.console.print(tables.permissions_table(policy.mode, policy.rules()))
        dirs = policy.extra_dirs() if hasattr(policy, "extra_dirs") else []
        if dirs:
            ctx.console.print(tables.extra_dirs_table(dirs))
        held = getattr(ctx.runtime, "held_settings", None)
        if held is not None:
            from .project_trust_view import held_rules

            ctx.console.print(held_rules(held))
        ctx.console.print(Text("/permissions allow|deny|ask RULE [--save], save RULE, remove "
                               "RULE  e.g. Bash(git status); saved rules go to "
                               f"{_settings_shown(policy)}", style="dim"))
        return
    action, rule = words[0], (words[1].strip() if len(words) > 1 else "")
    rule, save = _split_save_flag(rule)
    if action not in ("allow", "deny", "ask", "save", "remove") or not rule:
        raise UserError(PERMISSION_USAGE)
    if save and action not in ("allow", "deny", "ask"):
        raise UserError(f"{SAVE_FLAG} goes with allow, deny or ask; /permissions {action} {rule}")
    if action == "remove":
        removed = [e for e in ("allow", "deny", "ask") if policy.remove_rule(rule, e)]
        if not removed:
            raise UserError(f"no rule {rule!r} to remove (see /permissions)")
        ctx.console.print(f"removed {' and '.join(removed)} rule {rule}")
        return
    from ..permissions.rules import parse_rule

    rule = parse_rule(rule).text  # the policy's spelling; a bad rule is one line, no write
    if action == "save":
        _save_session_rule(ctx, rule)
        return
    entry = policy.add_rule(rule, action, source="session", save=save)
    where = f"saved to {_settings_shown(policy)}" if save else "this session"
    ctx.console.print(f"added {entry.effect} rule {entry.rule} ({where})")


def _split_save_flag(rule: str) -> tuple[str, bool]:
    """("Bash(ls) --save", ...) -> ("Bash(ls)", True); a --save inside the rule stays."""
    words = rule.split()
    if words and words[-1] == SAVE_FLAG:
        return " ".join(words[:-1]), True
    if words and words[0] == SAVE_FLAG:
        return " ".join(words[1:]), True
    return rule, False


def _settings_shown(policy: Any) -> str:
    return policy.settings_source.removeprefix("settings: ")


def _save_session_rule(ctx: SlashContext, rule: str) -> None:
    """Write a rule added this session (an "allow always" answer, /permissions allow) to
    settings.json, so later sessions have it too."""
    from ..permissions.policy import SESSION

    policy = ctx.runtime.policy
    text = rule
    entries = [e for e in policy.rules() if e.rule == text]
    effects = [e.effect for e in entries if e.source == SESSION]
    if not effects:
        saved = [e.effect for e in entries if e.source == policy.settings_source]
        if saved:
            ctx.console.print(f"{' and '.join(saved)} rule {text} is already in "
                              f"{_settings_shown(policy)}")
            return
        raise UserError(f"no session rule {text!r} to save (/permissions allow RULE --save "
                        "adds and saves one)")
    for effect in dict.fromkeys(effects):
        policy.add_rule(text, effect, save=True)
        ctx.console.print(f"saved {effect} rule {text} to {_settings_shown(policy)} "
                          "(later sessions have it too)")


def cmd_mode(ctx: SlashContext, arg: str) -> None:
    policy = ctx.runtime.policy
    mode = policy.set_mode(arg.strip()) if arg.strip() else policy.cycle_mode()
    style = "bold red" if mode == "bypassPermissions" else "bold"
    ctx.console.print(Text.assemble("permission mode: ", (mode, style)))


def cmd_cost(ctx: SlashContext, arg: str) -> None:
    from ..pricing import PriceTable
    from . import tables

    rows = ctx.lead.agent.spend.rows()
    ctx.console.print(tables.cost_table(rows, teammates(ctx.runtime), PriceTable.load()))


def cmd_mcp(ctx: SlashContext, arg: str) -> None:
    from .mcp_view import show

    show(ctx.console, ctx.runtime)


def cmd_spawn(ctx: SlashContext, arg: str) -> None:
    words = arg.split(None, 1)
    if not words:
        raise UserError("usage: /spawn NAME [ROLE]")
    name = check_name(words[0], "teammate name")
    role = words[1].strip() if len(words) > 1 else "generalist"
    member = ctx.runtime.team.spawn(name, role)  # its own line says "spawned NAME (ROLE)"
    ctx.console.print(f"{member.name} claims ready tasks by itself; /team shows what it does",
                      style="dim")


def cmd_shutdown(ctx: SlashContext, arg: str) -> None:
    if not arg.strip():
        raise UserError("usage: /shutdown NAME")
    name = check_name(arg.strip(), "teammate name")
    ctx.runtime.team.request_shutdown(name, sender="lead")  # its line: "→ NAME (shutdown…)"
    ctx.console.print(f"asked {name} to shut down: it finishes its current step first",
                      style="dim")


def cmd_verbose(ctx: SlashContext, arg: str) -> None:
    ctx.settings.verbose = not ctx.settings.verbose
    state = "on: teammates' text is shown" if ctx.settings.verbose else "off"
    ctx.console.print(f"verbose {state}")


def cmd_resume(ctx: SlashContext, arg: str) -> None:
    from ..team.sessions import SessionStore, session_table

    ctx.console.print(Text(session_table(SessionStore(ctx.runtime.team_dir).all())))
    current = getattr(ctx.runtime, "session", None)
    if current is not None:
        ctx.console.print(Text(f"this session: {current.id}", style="dim"))


def cmd_memory(ctx: SlashContext, arg: str) -> None:
    from .memory_view import cmd_memory as show

    show(ctx, arg)


def cmd_hooks(ctx: SlashContext, arg: str) -> None:
    from .hooks_view import cmd_hooks as show

    show(ctx, arg)


def cmd_agents(ctx: SlashContext, arg: str) -> None:
    from .agents_view import cmd_agents as show

    show(ctx, arg)


def cmd_quit(ctx: SlashContext, arg: str) -> SlashResult:
    return SlashResult(quit=True)


COMMANDS: dict[str, Command] = {
    c.name: c
    for c in (
        Command("/help", "/help", "show commands and keys", cmd_help),
        Command("/tasks", "/tasks [ID|graph]", "the task board (one task, or the dependency graph)",
                cmd_tasks),
        Command("/team", "/team", "teammates: state, task, idle reason, tokens", cmd_team),
        Command("/inbox", "/inbox", "peek at the lead's unread messages", cmd_inbox),
        Command("/compact", "/compact", "summarise the lead's conversation", cmd_compact),
        Command("/clear", "/clear", "fresh lead conversation (board, team stay)", cmd_clear),
        Command("/model", "/model [NAME]", "list the endpoint's models, or change the lead's",
                cmd_model),
        Command("/permissions", "/permissions [allow|deny|save|remove RULE]",
                "rules in force and their source; --save keeps one", cmd_permissions),
        Command("/memory", "/memory", "project memory files loaded (AGENTS.md, CLAUDE.md)",
                cmd_memory),
        Command("/hooks", "/hooks", "hooks configured in the settings layers", cmd_hooks),
        Command("/sandbox", "/sandbox", "the OS sandbox: available, mode, each agent's "
                "boundary", cmd_sandbox),
        Command("/mode", "/mode [MODE]", "cycle permission modes (Shift+Tab)", cmd_mode),
        Command("/cost", "/cost", "tokens and dollars per agent and in total", cmd_cost),
        Command("/mcp", "/mcp", "MCP servers: state and tools", cmd_mcp),
        Command("/spawn", "/spawn NAME [ROLE]", "start a teammate (a ROLE that names an "
                "agent type gives it that type)", cmd_spawn),
        Command("/agents", "/agents", "agent types from .claude/agents and ~/.claude/agents",
                cmd_agents),
        Command("/shutdown", "/shutdown NAME", "ask a teammate to shut down", cmd_shutdown),
        Command("/verbose", "/verbose", "show teammates' text too (toggle)", cmd_verbose),
        Command("/resume", "/resume", "list sessions (agent-cli --resume ID resumes one)",
                cmd_resume),
        Command("/quit", "/quit", "shut the team down and exit (Ctrl-D)", cmd_quit),
    )
}
ALIASES = {"/exit": "/quit", "/?": "/help"}
KEYS = (
    ("!CMD", "run your own shell command in the workdir (no approval)"),
    ("Enter / Alt+Enter", "send / new line (a paste stays one message)"),
    ("Shift+Tab", "cycle permission modes"),
    ("Ctrl-R", "search history"),
    ("Ctrl-C / Esc", "clear the line, or interrupt the lead"),
    ("Ctrl-D", "exit"),
)


def dispatch(ctx: SlashContext, line: str) -> SlashResult:
    """Run one slash command line; errors are printed, never raised."""
    name, _, arg = line.strip().partition(" ")
    name = ALIASES.get(name, name)
    command = COMMANDS.get(name)
    if command is None:
        ctx.console.print(Text(f"unknown command {name} — /help lists them (nothing was sent "
                               "to the model)", style="red"))
        return SlashResult(ok=False)
    try:
        return command.handler(ctx, arg) or SlashResult()
    except UserError as exc:
        ctx.console.print(Text(f"error: {exc}", style="red"))
    except AgentCliError as exc:
        ctx.console.print(Text(f"{name} failed: {exc}", style="red"))
    return SlashResult(ok=False)


def command_help() -> dict[str, str]:
    return {c.name: c.help for c in COMMANDS.values()}


def argument_values(runtime: Any) -> Callable[[str, int, list[str]], Iterable[str]]:
    """Completion source for SlashCompleter: names, task ids, modes, permission rules."""

    def values(command: str, index: int, before: list[str]) -> Iterable[str]:
        if command == "/shutdown" and index == 0:
            return [m.name for m in teammates(runtime) if m.status != "shutdown"]
        if command == "/tasks" and index == 0:
            return [*(str(t.id) for t in runtime.board.snapshot().tasks), "graph"]
        if command == "/mode" and index == 0:
            return list(MODES)
        if command == "/model" and index == 0:
            return ["demo", "claude-sonnet-4-5", "claude-opus-4-1", "claude-haiku-4-5"]
        if command == "/permissions":
            if index == 0:
                return ["allow", "deny", "ask", "save", "remove"]
            if index == 1 and before[:1] == ["remove"]:
                return [e.rule for e in runtime.policy.rules()]
            if index == 1 and before[:1] == ["save"]:
                return [e.rule for e in runtime.policy.rules() if e.source == "session"]
            if index >= 2 and before[:1] in (["allow"], ["deny"], ["ask"]):
                return [SAVE_FLAG]
        return []

    return values
