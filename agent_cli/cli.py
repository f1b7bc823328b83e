"""The command line: the REPL (default), headless -p, and the state subcommands.

Subcommand modules register their own parsers (commands/tasks.py, commands/team.py); this
module only builds the top-level parser, maps errors to exit codes and dispatches.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from . import __version__
from .errors import AgentCliError, UserError

EXIT_CODES = """exit codes:
  0  success
  1  failure (a test of the team timed out, a model error, an interrupted run)
  2  usage error (bad option, invalid name or input)
  3  not found (no such task, teammate or request)
  4  refused (not claimable, owned by someone else, wrong claim token, cycle)
  5  storage error (read-only or full disk; nothing was half-written)
  130 interrupted (Ctrl-C)
"""

PERMISSION_MODES = ("default", "acceptEdits", "plan", "bypassPermissions")


def workdir_parent() -> argparse.ArgumentParser:
    """-C/--workdir accepted before or after a subcommand."""
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument(
        "-C",
        "--workdir",
        default=argparse.SUPPRESS,
        metavar="DIR",
        help="where .tasks/ and .team/ live (default: the current directory)",
    )
    return p


def build_parser() -> argparse.ArgumentParser:
    from .commands import tasks as tasks_cmd
    from .commands import team as team_cmd

    parser = argparse.ArgumentParser(
        prog="agent-cli",
        description="A terminal agent REPL: chat with a lead agent whose teammates claim work "
        "from a shared task board by themselves.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        parents=[workdir_parent()],
    )
    parser.add_argument("--version", action="version", version=f"agent-cli {__version__}")
    parser.add_argument(
        "--model",
        metavar="NAME",
        help="Claude model name, 'demo' (offline), or 'script:PATH.json' (scripted); "
        "default: $AGENT_CLI_MODEL, else Claude when credentials are set, else demo",
    )
    parser.add_argument("-p", "--print", dest="prompt", metavar="PROMPT",
                        help="headless: run one lead turn with PROMPT and print the result")
    parser.add_argument("--wait", action="store_true",
                        help="headless: wait until the team is quiet before printing")
    parser.add_argument("--timeout", type=float, default=600.0, metavar="S",
                        help="headless --wait limit in seconds (default 600)")
    parser.add_argument("--output-format", choices=("text", "json"), default="text")
    parser.add_argument("--allow", action="append", default=[], metavar="RULE",
                        help="allow rule, e.g. 'Bash(git status)' or 'Write(src/**)'")
    parser.add_argument("--deny", action="append", default=[], metavar="RULE",
                        help="deny rule (deny wins over allow)")
    parser.add_argument("--permission-mode", choices=PERMISSION_MODES, default="default")
    parser.add_argument("--dangerously-skip-permissions", action="store_true",
                        help="allow bypassPermissions mode (always shown in the toolbar)")
    parser.add_argument("--idle-timeout", type=float, default=60.0, metavar="S",
                        help="seconds before an idle teammate notifies the lead (0 = never)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    tasks_cmd.add_parser(sub, workdir_parent())
    team_cmd.add_parsers(sub, workdir_parent())
    return parser


def workdir_of(args: argparse.Namespace) -> Path:
    raw = getattr(args, "workdir", None) or "."
    path = Path(raw).expanduser()
    if not path.is_dir():
        raise UserError(f"workdir {raw} is not a directory")
    return path.resolve()


def runtime_config(args: argparse.Namespace):
    from .runtime import RuntimeConfig

    mode = args.permission_mode
    if mode == "bypassPermissions" and not args.dangerously_skip_permissions:
        raise UserError("bypassPermissions needs --dangerously-skip-permissions")
    if args.dangerously_skip_permissions and mode == "default":
        mode = "bypassPermissions"
    return RuntimeConfig(
        model=args.model,
        permission_mode=mode,
        allow=list(args.allow),
        deny=list(args.deny),
        allow_bypass=args.dangerously_skip_permissions,
        idle_timeout_s=args.idle_timeout,
    )


def dispatch(args: argparse.Namespace) -> int:
    if getattr(args, "handler", None) is not None:
        return args.handler(args)
    from .runtime import Runtime

    runtime = Runtime.open(workdir_of(args), runtime_config(args))
    if args.prompt is not None:
        from .ui.headless import run_headless

        return run_headless(runtime, args)
    from .ui.repl import run_repl

    return run_repl(runtime, args)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return dispatch(args)
    except UserError as exc:
        print(f"agent-cli: {exc}", file=sys.stderr)
        return exc.exit_code
    except AgentCliError as exc:
        print(f"agent-cli: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("agent-cli: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
