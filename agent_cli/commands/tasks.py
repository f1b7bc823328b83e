"""`agent-cli tasks ...`: script the task board from a second terminal.

add / update / list / show / claim / complete / release / doctor. Each handler returns an exit code;
refusals raise the errors.py classes, which cli.main prints as one line (exit 3 not found,
4 refused, 2 bad input). `--json` prints task objects exactly as stored in `.tasks/`.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the board pulls in pydantic: imported when a command runs
    from ..board.models import Problem
    from ..board.store import TaskBoard
from .. import safetext
from ..errors import Refused, UserError
from . import worktrees as worktree_cmds
from .state_checks import odd_state_lines, warns_odd_files
from .task_routing import (
    add_parser_update,
    add_routing_flags,
    check_flags,
    claim_role,
    roster_of,
    routed,
    stranded_marks,
)
from .task_views import render_table, render_task

EXIT_CODES = """exit codes:
  0  done
  1  doctor found problems, or the task file is unreadable
  2  bad input (invalid name, empty subject, bad option)
  3  no such task
  4  refused (blocked, owned by someone else, wrong token, nothing claimable, cycle)
  5  storage error (nothing was half-written)
"""


def add_parser(sub: Any, parent: argparse.ArgumentParser) -> None:
    """Register `tasks` and its actions on the top-level subparsers."""
    tasks = sub.add_parser(
        "tasks",
        parents=[parent],
        help="the shared task board (.tasks/)",
        description="Read and change the shared task board in <workdir>/.tasks/. "
        "Claims take the lowest claimable id; an owner holds one task at a time.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    acts = tasks.add_subparsers(dest="tasks_action", metavar="ACTION", required=True)
    _add_parser_add(acts, parent)  # the order here is the order `tasks --help` lists them
    add_parser_update(acts, parent)
    _add_parser_reads(acts, parent)
    _add_parser_ownership(acts, parent)
    _add_parser_checks(acts, parent)


def _add_parser_reads(acts: Any, parent: argparse.ArgumentParser) -> None:
    """list / show: reading the board."""
    p = acts.add_parser("list", parents=[parent], help="all tasks as a table (or --json)")
    p.add_argument("--json", action="store_true", help="a JSON array of the task objects")
    p.set_defaults(handler=cmd_list)

    p = acts.add_parser("show", parents=[parent], help="one task")
    p.add_argument("id", type=int)
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_show)


def _add_parser_ownership(acts: Any, parent: argparse.ArgumentParser) -> None:
    """claim / complete / release: taking a task and giving it back."""
    p = acts.add_parser(
        "claim",
        parents=[parent],
        help="claim task ID, or the lowest claimable one; prints the token",
    )
    p.add_argument("id", type=int, nargs="?")
    p.add_argument("--as", dest="owner", required=True, metavar="NAME")
    p.add_argument("--lease", metavar="S", help="lease in seconds; nothing renews it "
                   "(default: $AGENT_CLI_LEASE_S, else 600)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=warns_odd_files(cmd_claim))

    p = acts.add_parser(
        "complete",
        parents=[parent],
        help="complete your in-progress task",
        description="Complete an in-progress task. Without --token, the task's current claim "
        "token is used, but only when the task is owned by --as NAME.",
    )
    p.add_argument("id", type=int)
    p.add_argument("--as", dest="owner", required=True, metavar="NAME")
    p.add_argument("--token", metavar="T", help="the claim token printed by `tasks claim`")
    p.add_argument("--result", default="", metavar="TEXT")
    p.add_argument(
        "--run-verify",
        action="store_true",
        help="run the task's verify command without asking, even one a model wrote "
        "(without a terminal, such a verify is refused unless this is given)",
    )
    p.set_defaults(handler=warns_odd_files(cmd_complete))

    p = acts.add_parser(
        "release", parents=[parent], help="put your in-progress task back to pending"
    )
    p.add_argument("id", type=int)
    p.add_argument("--as", dest="owner", required=True, metavar="NAME")
    p.add_argument("--reason", default="released from the command line")
    p.set_defaults(handler=warns_odd_files(cmd_release))


def _add_parser_checks(acts: Any, parent: argparse.ArgumentParser) -> None:
    """doctor, the worktree verbs, graph: looking over the whole board."""
    p = acts.add_parser(
        "doctor", parents=[parent], help="list every problem on the board; exit 1 if there is any"
    )
    p.set_defaults(handler=cmd_doctor)
    worktree_cmds.add_parsers(acts, parent)  # diff, clean-worktrees

    p = acts.add_parser(
        "graph",
        parents=[parent],
        help="the dependency graph: text, or mermaid / dot for docs and review tools",
        description="Draw the dependency graph: edges go from a blocker to what it unblocks. "
        "Missing or corrupt dependencies and cycles are drawn and listed as problems.",
    )
    p.add_argument("--format", choices=("text", "mermaid", "dot"), default="text")
    p.set_defaults(handler=cmd_graph)


def _add_parser_add(acts: Any, parent: argparse.ArgumentParser) -> None:
    p = acts.add_parser("add", parents=[parent], help="add a task; prints its id")
    p.add_argument("subject")
    p.add_argument("-d", "--description", default="")
    p.add_argument(
        "--blocked-by",
        type=int,
        action="append",
        default=[],
        metavar="ID",
        help="a task that must be completed first (repeatable)",
    )
    p.add_argument(
        "--verify-command",
        metavar="CMD",
        help="shell command the host runs before accepting a completion",
    )
    exp = p.add_mutually_exclusive_group()
    exp.add_argument("--expect-stdout", metavar="TEXT", help="expected stdout (stripped)")
    exp.add_argument(
        "--expect-stdout-file",
        metavar="PATH",
        help="workdir-relative file holding the expected stdout",
    )
    p.add_argument(
        "--expect-exit",
        type=int,
        default=0,
        metavar="N",
        help="expected exit code of the verify command (default 0)",
    )
    p.add_argument(
        "--as",
        dest="actor",
        default="lead",
        metavar="NAME",
        help="who adds it, for the event log (default: lead)",
    )
    add_routing_flags(p)
    p.set_defaults(handler=warns_odd_files(cmd_add))


def board_of(args: argparse.Namespace) -> TaskBoard:
    """The team's board (stores.open_stores), with the roster's liveness check: an owner
    whose process ended on this host loses its leases at once, at this command's first
    board operation."""
    from .workdir import stores_of

    return stores_of(args).board


def report_expired(board: TaskBoard, stream: Any = None) -> None:
    """One line per lease this command's board operations took back."""
    for exp in board.take_expired():
        print(f"lease expired: {exp.line()}", file=stream or sys.stdout)


def print_json(data: Any) -> None:
    print(safetext.dumps(data, indent=2))


def warn(problem: Problem) -> None:
    print(f"agent-cli: warning: {problem.line()}", file=sys.stderr)


# ----- handlers -----
def cmd_add(args: argparse.Namespace) -> int:
    verify = None
    if args.verify_command is not None:
        verify = {
            "command": args.verify_command,
            "expected_stdout": args.expect_stdout,
            "expected_stdout_file": args.expect_stdout_file,
            "expected_exit_code": args.expect_exit,
            "set_by": "cli",
        }
    elif args.expect_stdout is not None or args.expect_stdout_file is not None:
        raise UserError("--expect-stdout/--expect-stdout-file need --verify-command")
    check_flags(args)
    route = routed(roster_of(args), args.assign, args.role, args.require_plan)
    task = board_of(args).create(
        args.subject, args.description, args.blocked_by, verify, actor=args.actor, **route
    )
    if task.verify is not None:  # the proof that a person typed it (board/verify_authors.py)
        from ..board.verify_authors import VerifyAuthors
        from .workdir import workdir_of

        VerifyAuthors(workdir_of(args)).record(task.id, task.verify, "cli")
    print(task.id)
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    board = board_of(args)
    snap = board.snapshot()
    if args.json:
        for problem in snap.problems:
            warn(problem)
        report_expired(board, sys.stderr)
        print_json([t.to_json() for t in snap.tasks])
        return 0
    from .worktrees import where_of

    print(render_table(snap.tasks, snap.problems, stranded_marks(args, snap.tasks),
                       where_of(args)))
    report_expired(board)
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    task = board_of(args).get(args.id)
    if args.json:
        print_json(task.to_json())
    else:
        print(render_task(task))
    return 0


def cmd_claim(args: argparse.Namespace) -> int:
    from ..board.leases import lease_seconds

    board = board_of(args)
    role = claim_role(args)
    lease = lease_seconds(args.lease) if args.lease is not None else None
    if args.id is None:
        found = board.claim_next(args.owner, role=role, lease_s=lease)
        if found.task is None:
            raise Refused(found.reason)
        task = found.task
    else:
        task = board.claim(args.id, args.owner, role=role, lease_s=lease)
    report_expired(board, sys.stderr if args.json else None)
    if args.json:
        print_json(task.to_json())
    else:
        print(f"#{task.id} claimed by {task.owner}: {task.subject}")
        print(f"claim token: {task.claim_token}")
        print(f"lease until: {task.lease_expires_at} (nothing renews it; complete before then)")
    return 0


def cmd_complete(args: argparse.Namespace) -> int:
    from ..board import dag
    from .workdir import workdir_of

    board = board_of(args)
    task = board.get(args.id)
    token = args.token
    if token is None:  # the owner's own current token; never someone else's
        if task.status == "in_progress" and task.owner != args.owner:
            raise Refused(f"task {task.id} is owned by {task.owner}")
        token = task.claim_token or ""
    mine = task.status == "in_progress" and task.owner == args.owner
    from .worktrees import land_from_cli

    if mine and token == task.claim_token and land_from_cli(args, task, token):
        return 0  # (land_from_cli asks for a model-written verify first, as below)
    if task.verify is not None and mine and token == task.claim_token:
        from .verify_cli import run_cli_verify

        # else complete() refuses with the reason
        run_cli_verify(task, workdir_of(args), args.run_verify, board.file_of(task.id))
    done = board.complete(args.id, args.owner, token, args.result)
    print(f"#{done.task.id} completed by {done.task.owner}")
    if done.unblocked:
        print(f"now claimable: {dag.ids_text(done.unblocked)}")
    return 0


def cmd_release(args: argparse.Namespace) -> int:
    task = board_of(args).release(args.id, args.owner, args.reason)
    print(f"#{task.id} released: pending again")
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    from .state_checks import board_watch

    watch = board_watch(args)  # before the board's lock sets anything aside
    board = board_of(args)
    problems = board.doctor()
    report_expired(board)
    for line in stale_holds(board, args):
        print(f"note: {line}")
    named = [problem.line() for problem in problems]
    for note in board.event_problems():
        named.append(f"note: {note.path}: {note.message} (skipped when reading the log)")
        print(named[-1])
    for problem in problems:
        print(problem.line())
    odd = odd_state_lines(args, " ".join(named), watch)
    problems = [*problems, *odd]
    from .worktrees import doctor_lines

    for line in doctor_lines(args):
        print(line)
    if problems:
        print(f"{len(problems)} problem{'s' if len(problems) != 1 else ''} on the board")
        return 1
    count = len(board.snapshot().tasks)
    print(f"board OK: {count} task{'s' if count != 1 else ''}, no problems")
    return 0


def cmd_graph(args: argparse.Namespace) -> int:
    import shutil

    from ..board.graph_render import RENDERERS, render_text

    snap = board_of(args).snapshot()
    if args.format == "text":
        print(render_text(snap, width=max(40, shutil.get_terminal_size((100, 24)).columns)))
        return 0
    for problem in snap.problems:
        warn(problem)
    print(RENDERERS[args.format](snap))
    return 0


def stale_holds(board: TaskBoard, args: argparse.Namespace) -> list[str]:
    """In-progress tasks whose owner the roster shows as not running (stopped, failed, or
    on a host we cannot check): they go back to pending when their lease runs out."""
    from ..team.roster import this_host
    from .workdir import stores_of

    members = {m.name: m for m in stores_of(args).roster.members()}
    lines = []
    for task in board.snapshot().tasks:
        m = members.get(task.owner or "")
        if task.status != "in_progress" or m is None:
            continue
        if m.status in ("shutdown", "failed") or (m.host and m.host != this_host()):
            where = f"on {m.host}" if m.host and m.host != this_host() else m.status
            lines.append(f"#{task.id} held by {m.name} ({where}); "
                         f"lease until {task.lease_expires_at or '?'}")
    return lines
