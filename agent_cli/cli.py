"""The command line: the REPL (default), headless -p, and the state subcommands.

Subcommand modules register their own parsers (commands/tasks.py, commands/team.py); this
module only builds the top-level parser, checks option values (a bad number is one argparse
error, exit 2), maps errors to exit codes and dispatches. A reader that closes our stdout
early (`agent-cli tasks list --json | head -1`) ends the run quietly with exit 1, as GNU tools
do on a write error: no traceback. Everything but the REPL and `watch` writes through
`safetext.SafeStream`: no control character anyone else wrote reaches the terminal raw.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import math
import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from . import __version__
from .commands.workdir import close_stores, workdir_of, workdir_parent
from .errors import AgentCliError, UserError
from .safetext import SafeStream, visible

EXIT_CODES = """exit codes:
  0  success (headless: every task the run created or claimed is completed)
  1  failure (headless: tasks left unfinished, a --wait timeout, a model error;
     or the reader of our output closed the pipe early, e.g. `| head -1`)
  2  usage error (bad option, invalid name or input)
  3  not found (no such task, teammate or request)
  4  refused (not claimable, owned by someone else, wrong claim token, cycle)
  5  storage error (read-only or full disk; nothing was half-written)
  130 interrupted (Ctrl-C)
"""

PERMISSION_MODES = ("default", "acceptEdits", "plan", "bypassPermissions")
COMPACT_ENV = "AGENT_CLI_COMPACT_AT"


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number of seconds")
    return value


def positive_seconds(text: str) -> float:
    """argparse type: a finite number of seconds > 0 (--timeout)."""
    value = _number(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: use a number of seconds above 0")
    return value


def idle_seconds(text: str) -> float:
    """argparse type: a finite number of seconds >= 0, 0 meaning never (--idle-timeout)."""
    value = _number(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: use 0 (never) or a positive number")
    return value


def token_count(text: str) -> int:
    """argparse type: a whole number of tokens >= 1 (--compact-at)."""
    try:
        value = int(text.strip().replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of tokens") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: use a number of tokens above 0")
    return value


def turn_count(text: str) -> int:
    """argparse type: a whole number of model requests >= 1 (--max-turns)."""
    try:
        value = int(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: use a number above 0")
    return value


def build_parser() -> argparse.ArgumentParser:
    from .commands import board as board_cmd
    from .commands import tasks as tasks_cmd
    from .commands import team as team_cmd
    from .commands import teammate as teammate_cmd
    from .commands import watch as watch_cmd

    parser = argparse.ArgumentParser(
        prog="agent-cli",
        description="A terminal agent REPL: chat with a lead agent whose teammates claim work "
        "from a shared task board by themselves.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        parents=[workdir_parent()],
    )
    parser.add_argument("--version", action="version", version=f"agent-cli {__version__}")
    add_model_options(parser)
    add_headless_options(parser)
    add_permission_options(parser)
    parser.add_argument("--idle-timeout", type=idle_seconds, default=60.0, metavar="S",
                        help="seconds before an idle teammate notifies the lead (0 = never)")
    parser.add_argument("--compact-at", type=token_count, default=None, metavar="TOKENS",
                        help="summarize an agent's older context once it passes TOKENS "
                        f"(default: ${COMPACT_ENV}, else 80%% of the model's context window)")
    parser.add_argument("--mcp-config", action="append", default=[], metavar="FILE",
                        help="MCP servers to start (Claude Code's .mcp.json format; repeatable); "
                        "the workdir's .mcp.json is used too, once you trust it")
    add_session_options(parser)
    parser.add_argument("--worktrees", choices=("on", "off"), default=None,
                        help="teammates' tasks in git worktrees (default: on in a git "
                        "repository, unless settings say \"worktrees\": \"off\")")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    tasks_cmd.add_parser(sub, workdir_parent())
    team_cmd.add_parsers(sub, workdir_parent())
    teammate_cmd.add_parser(sub, workdir_parent(),
                            [add_model_options, add_permission_options], runtime_config)
    watch_cmd.add_parser(sub, workdir_parent())
    board_cmd.add_parser(sub, workdir_parent())
    return parser


def add_model_options(parser: argparse.ArgumentParser) -> None:
    """Which model, and whether it thinks before it answers."""
    parser.add_argument(
        "--model",
        metavar="NAME",
        help="Claude model name, 'demo' (offline), or 'script:PATH.json' (scripted); "
        "default: $AGENT_CLI_MODEL, else Claude when credentials are set, else demo",
    )
    thinking = parser.add_mutually_exclusive_group()
    thinking.add_argument("--thinking", nargs="?", const=True, default=None, type=token_count,
                          metavar="BUDGET", help="extended thinking for every agent, with a "
                          "budget in tokens (default: $MAX_THINKING_TOKENS, settings, 10000)")
    thinking.add_argument("--no-thinking", dest="thinking", action="store_const", const=False,
                          help="no extended thinking, whatever the settings say")


def add_headless_options(parser: argparse.ArgumentParser) -> None:
    """-p and what shapes a headless run."""
    parser.add_argument("-p", "--print", dest="prompt", metavar="PROMPT", nargs="?", const="",
                        help="headless: run one lead turn with PROMPT and print the result; "
                        "piped standard input is added to it (capped), or is the prompt "
                        "when none is given; PROMPT may be a /command")
    parser.add_argument("--wait", action="store_true",
                        help="headless: wait until the team is quiet before printing")
    parser.add_argument("--timeout", type=positive_seconds, default=600.0, metavar="S",
                        help="headless --wait limit in seconds (default 600)")
    parser.add_argument("--output-format", choices=("text", "json", "stream-json"),
                        default="text", help="headless output: text, one JSON report, or "
                        "stream-json (one JSON object per line as things happen)")
    parser.add_argument("--max-turns", type=turn_count, default=None, metavar="N",
                        help="headless: at most N lead model requests in this run")
    parser.add_argument("--append-system-prompt", default="", metavar="TEXT",
                        help="text added to the end of the lead's system prompt")


def add_permission_options(parser: argparse.ArgumentParser) -> None:
    """Rules, modes and trust given on the command line."""
    parser.add_argument("--allow", action="append", default=[], metavar="RULE",
                        help="allow rule, e.g. 'Bash(git status)' or 'Write(src/**)'")
    parser.add_argument("--deny", action="append", default=[], metavar="RULE",
                        help="deny rule (deny wins over allow)")
    parser.add_argument("--add-dir", dest="add_dirs", action="append", default=[],
                        metavar="DIR", help="a directory the file tools may also read and "
                        "write (as permissions.additionalDirectories); repeatable")
    parser.add_argument("--permission-mode", choices=PERMISSION_MODES, default=None,
                        help="default: permissions.defaultMode from the settings layers, "
                        "else default")
    parser.add_argument("--dangerously-skip-permissions", action="store_true",
                        help="allow bypassPermissions mode (always shown in the toolbar)")
    parser.add_argument("--trust-project-settings", action="store_true",
                        help="apply the allow rules, widening defaultMode and hooks of "
                        ".agent-cli/settings.json for this run, unasked (a terminal session "
                        "asks once; a headless run holds them otherwise)")
    box = parser.add_mutually_exclusive_group()
    box.add_argument("--sandbox", dest="sandbox", action="store_const", const=True,
                     default=None, help="run every shell command and task verify inside "
                     "its agent's OS sandbox for this run (sandbox.enabled)")
    box.add_argument("--no-sandbox", dest="sandbox", action="store_const", const=False,
                     help="run this session without the sandbox, whatever the settings say")


def add_session_options(parser: argparse.ArgumentParser) -> None:
    """-c/--continue, --resume [ID], --lease S (REPL and headless)."""
    parser.add_argument("-c", "--continue", dest="continue_session", action="store_true",
                        help="resume the most recent session of this workdir: the lead's "
                        "conversation and every teammate not shut down")
    parser.add_argument("--resume", nargs="?", const="", default=None, metavar="ID",
                        help="resume session ID; without ID, list the sessions")
    parser.add_argument("--lease", type=positive_seconds, default=None, metavar="S",
                        help="claim lease in seconds, renewed while a teammate runs "
                        "(default: $AGENT_CLI_LEASE_S, else 600)")


def session_ref(args: argparse.Namespace) -> str:
    """"new", "continue" or a session id, from -c / --resume ID."""
    resume = getattr(args, "resume", None)
    if getattr(args, "continue_session", False):
        if resume is not None:
            raise UserError("use -c or --resume ID, not both")
        return "continue"
    return resume or "new"


def runtime_config(args: argparse.Namespace):
    from .permissions.layers import session_defaults
    from .runtime import RuntimeConfig

    trust = getattr(args, "trust_project_settings", False)
    defaults = session_defaults(workdir_of(args), trust)  # settings layers; flags override
    mode = args.permission_mode or defaults.get("permission_mode", "default")
    if mode == "bypassPermissions" and not args.dangerously_skip_permissions:
        raise UserError("bypassPermissions needs --dangerously-skip-permissions")
    if args.dangerously_skip_permissions and mode == "default":
        mode = "bypassPermissions"
    model = args.model
    if model is None and not os.environ.get("AGENT_CLI_MODEL", "").strip():
        model = defaults.get("model")
    config = RuntimeConfig(
        model=model,
        permission_mode=mode,
        allow=list(args.allow),
        deny=list(args.deny),
        add_dirs=[os.path.abspath(os.path.expanduser(d)) for d in getattr(args, "add_dirs", [])],
        allow_bypass=args.dangerously_skip_permissions,
        idle_timeout_s=args.idle_timeout,
        worktrees=getattr(args, "worktrees", None),
        append_system_prompt=getattr(args, "append_system_prompt", "") or "",
        max_turns=getattr(args, "max_turns", None),
        headless=getattr(args, "prompt", None) is not None,
        trust_project_settings=trust,
        mode_from_flag=bool(args.permission_mode or args.dangerously_skip_permissions),
        sandbox=getattr(args, "sandbox", None),
    )
    from .board.leases import lease_from_env

    config.lease_s = getattr(args, "lease", None) or lease_from_env(os.environ)
    config.session = session_ref(args)
    from .commands.workdir import team_of
    from .stores import configured_location

    config.team_name = team_of(args)
    location, config.board_notes = configured_location(workdir_of(args),
                                                       getattr(args, "board", None),
                                                       team=config.team_name)
    config.board = location.url

    from .models.retry import RetryPolicy

    config.retry = RetryPolicy.from_env(os.environ)  # a bad value is one clear line, exit 2
    config.thinking = session_thinking(args, defaults)
    compact_at = getattr(args, "compact_at", None) or compact_at_from_env(os.environ)
    if compact_at is not None:
        config.compact_threshold_tokens = compact_at
    return config


def session_thinking(args: argparse.Namespace, defaults: Mapping[str, Any]):
    """Extended thinking for the session (models/thinking.py); UserError when malformed."""
    from .models.thinking import ThinkingError, resolve

    where = defaults.get("thinking_from", "settings")
    try:
        return resolve(getattr(args, "thinking", None), os.environ, defaults.get("thinking"),
                       where)
    except ThinkingError as exc:
        raise UserError(str(exc)) from None


def compact_at_from_env(env: Mapping[str, str]) -> int | None:
    """$AGENT_CLI_COMPACT_AT as a token count (None when unset); UserError when invalid."""
    raw = env.get(COMPACT_ENV, "").strip()
    if not raw:
        return None
    try:
        return token_count(raw)
    except argparse.ArgumentTypeError as exc:
        raise UserError(f"{COMPACT_ENV}: {exc}") from None


def dispatch(args: argparse.Namespace, started: Callable[[], None] = lambda: None) -> int:
    """Run the command; `started()` is called once start-up is over (before the REPL, the
    headless run or a subcommand runs)."""
    if getattr(args, "handler", None) is not None:
        started()
        try:
            return args.handler(args)
        finally:
            close_stores(args)
    from .app import open_runtime

    if args.prompt is not None:  # piped input joins the prompt before anything starts
        from .ui.headless_stdin import with_piped

        args.prompt = with_piped(args.prompt, sys.stdin, sys.stderr)
    if getattr(args, "resume", None) == "":  # --resume alone: list the sessions
        return list_sessions(args)
    runtime = open_runtime(workdir_of(args), runtime_config(args))
    flag_files = list(getattr(args, "mcp_config", []) or [])
    if flag_files or os.path.lexists(runtime.workdir / ".mcp.json"):  # else MCP is not loaded
        from .mcp.session import build_manager

        runtime.mcp = build_manager(runtime, flag_files)
    from .team.resume import start_session

    # resumed teammates start once the approval UI is attached (ui/repl.py) or, headless,
    # once the run knows where the board stood (ui/headless.py: their claims are the run's)
    start_session(runtime, "repl" if args.prompt is None else "headless", defer=True)
    if args.prompt is not None:
        from .ui.headless import run_headless

        started()
        return run_headless(runtime, args)
    from .ui.repl import run_repl

    started()
    return run_repl(runtime, args)


def list_sessions(args: argparse.Namespace) -> int:
    from .team.sessions import SessionStore, session_table

    if getattr(args, "continue_session", False):
        raise UserError("use -c or --resume ID, not both")
    print(session_table(SessionStore(workdir_of(args) / ".team").all()))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    # Start-up only builds what lives as long as the process (modules, parsers, the session's
    # parts): the cyclic garbage collector would walk it all again and again for nothing.
    # It runs again once the session starts.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _main(argv, lambda: gc.enable() if collecting else None)
    finally:
        if collecting:
            gc.enable()


def _main(argv: Sequence[str] | None, started: Callable[[], None]) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    with safe_output(not draws_terminal(args)):
        try:
            code = dispatch(args, started)
            sys.stdout.flush()  # a closed pipe shows up here, not at interpreter exit
            return code
        except BrokenPipeError:
            return _reader_gone()
        except UserError as exc:
            print(f"agent-cli: {visible(exc)}", file=sys.stderr)
            return exc.exit_code
        except AgentCliError as exc:
            print(f"agent-cli: {visible(exc)}", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            print("agent-cli: interrupted", file=sys.stderr)
            return 130


def draws_terminal(args: argparse.Namespace) -> bool:
    """True for the REPL and `watch`: they write their own escape sequences (through rich's
    and prompt_toolkit's safe paths, ui/style.SafeConsole), so stdout is theirs as it is."""
    if getattr(args, "handler", None) is not None:
        return bool(getattr(args, "draws_terminal", False))
    return args.prompt is None and getattr(args, "resume", None) != ""


@contextlib.contextmanager
def safe_output(on: bool) -> Iterator[None]:
    """Every verb, headless run and message on stdout/stderr goes through
    `safetext.visible`: nothing a task, message, file name or model wrote is interpreted."""
    if not on:
        yield
        return
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = SafeStream(sys.stdout), SafeStream(sys.stderr)  # type: ignore
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


def _reader_gone() -> int:
    """stdout's reader closed the pipe: point stdout at /dev/null so the interpreter's final
    flush cannot fail again, and exit 1 without a message (the reader asked for no more)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no real file descriptor (a test's StringIO)
        pass
    return 1


if __name__ == "__main__":
    sys.exit(main())
