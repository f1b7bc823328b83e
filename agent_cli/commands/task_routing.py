"""`agent-cli tasks update` and the routing parts of `tasks add/claim/list`: who may claim a
task (--assign NAME, --role ROLE) and whether it needs a plan (--require-plan).

Roles come from the roster (.team/config.json): `tasks claim --as NAME` claims with NAME's
role on the team, none when NAME is not a member.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from ..board.route_args import ASSIGNEE_MEANS, PLAN_MEANS, ROLE_MEANS, reroutes
from ..errors import UserError
from .state_checks import warns_odd_files

if TYPE_CHECKING:
    from ..team.roster import Roster


def add_parser_update(acts: Any, parent: argparse.ArgumentParser) -> None:
    p = acts.add_parser(
        "update",
        parents=[parent],
        help="re-route a pending task or add dependencies",
        description="Change a pending, unclaimed task: who may claim it, whether it needs a "
        "plan, what it waits for. A task in progress cannot be reassigned.",
    )
    p.add_argument("id", type=int)
    p.add_argument("--blocked-by", type=int, action="append", default=[], metavar="ID")
    p.add_argument("--assign", metavar="NAME", help=ASSIGNEE_MEANS)
    p.add_argument("--unassign", action="store_true", help="drop the assignee")
    p.add_argument("--role", metavar="ROLE", help=ROLE_MEANS)
    p.add_argument("--any-role", action="store_true", help="drop the role")
    p.add_argument("--require-plan", action="store_true", dest="plan_on")
    p.add_argument("--no-require-plan", action="store_true", dest="plan_off")
    p.add_argument("--as", dest="actor", default="lead", metavar="NAME")
    p.set_defaults(handler=warns_odd_files(cmd_update))


def add_routing_flags(p: argparse.ArgumentParser) -> None:
    """`tasks add`'s --assign NAME, --role ROLE, --require-plan (meanings: board/route_args)."""
    p.add_argument("--assign", metavar="NAME", help=ASSIGNEE_MEANS)
    p.add_argument("--role", metavar="ROLE", help=ROLE_MEANS)
    p.add_argument("--require-plan", action="store_true", help=PLAN_MEANS)


CONTRARY = (
    ("assign", "unassign", "--assign", "--unassign"),
    ("role", "any_role", "--role", "--any-role"),
    ("plan_on", "plan_off", "--require-plan", "--no-require-plan"),
)


def check_flags(args: argparse.Namespace) -> None:
    """`--assign ""` / `--role ""` say nothing: refuse them (--unassign / --any-role clear)."""
    for flag, value in (("--assign", args.assign), ("--role", args.role)):
        if value is not None and not value.strip():
            raise UserError(f"{flag} is empty: give a name")


def cmd_update(args: argparse.Namespace) -> int:
    from .task_views import render_task
    from .tasks import board_of

    check_flags(args)
    for a, b, flag_a, flag_b in CONTRARY:
        if getattr(args, a) not in (None, False) and getattr(args, b):
            raise UserError(f"{flag_a} and {flag_b} contradict each other: give one")
    assignee = "" if args.unassign else args.assign
    role = "" if args.any_role else args.role
    plan = True if args.plan_on else False if args.plan_off else None
    if not args.blocked_by and not reroutes(assignee, role, plan):
        raise UserError(
            "nothing to update: give --assign/--unassign, --role/--any-role, "
            "--require-plan/--no-require-plan or --blocked-by"
        )
    route = routed(roster_of(args), assignee, role, plan)
    task = board_of(args).update(
        args.id, add_blocked_by=args.blocked_by, actor=args.actor, **route
    )
    print(render_task(task))
    return 0


def roster_of(args: argparse.Namespace) -> Roster:
    from .workdir import stores_of

    return stores_of(args).roster


def routed(
    roster: Roster, assignee: str | None, role: str | None, require_plan: bool | None
) -> dict:
    """team/assignments.routed, imported when a command runs (it pulls in the board)."""
    from ..team.assignments import routed as checked

    return checked(roster, assignee, role, require_plan)


def claim_role(args: argparse.Namespace) -> str | None:
    """The role `--as NAME` claims with: NAME's role on the team, None if not a member."""
    from ..names import NAME_RE

    if not NAME_RE.fullmatch(args.owner):
        return None  # the board refuses the name itself, in one line
    member = roster_of(args).get(args.owner)
    return member.role if member is not None else None


def stranded_marks(args: argparse.Namespace, tasks: list) -> dict[int, str]:
    """task id -> why no running teammate may take it (see team/assignments.py)."""
    from ..team.assignments import stranded

    if not any(t.assignee is not None or t.role is not None for t in tasks):
        return {}  # nothing routed: no need to read the roster
    roster = roster_of(args)
    return stranded(tasks, roster.snapshot().members, roster.is_alive)
