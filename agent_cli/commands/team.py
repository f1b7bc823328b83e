"""`agent-cli team`, `agent-cli inbox NAME`, `agent-cli send`: the team's state from a shell.

These read and write the team's stores directly (stores.open_stores: .team/, or the --board
database; no Runtime, no model), so a second terminal can watch a running session's team and
message its agents. `inbox` only peeks: it never acknowledges.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from .. import safetext
from ..errors import NotFound, StorageError, UserError
from ..names import LEAD, check_name

if TYPE_CHECKING:  # the stores pull in pydantic: imported when a command runs, not at start-up
    from ..storeset import StoreSet
    from ..team.mailbox import MailMessage
    from ..team.roster import Member

REASON_WIDTH = 60
CONTENT_WIDTH = 200


def add_parsers(sub: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    """Register `team`, `inbox` and `send` (each accepts -C/--workdir via `parent`)."""
    p = sub.add_parser(
        "team",
        parents=[parent],
        help="show the team: members, status, current task, idle reason",
        description="Show every member of the team recorded in .team/config.json, with "
        "the host its process runs on.",
    )
    p.add_argument("--json", action="store_true", help="print the team as one JSON object")
    p.set_defaults(handler=run_team)

    p = sub.add_parser(
        "inbox",
        parents=[parent],
        help="show NAME's unread messages (consumes nothing)",
        description="Peek at NAME's unread messages; nothing is marked read.",
    )
    p.add_argument("name", metavar="NAME", help="whose inbox (e.g. lead, alice)")
    p.add_argument("--json", action="store_true", help="print the messages as a JSON array")
    p.set_defaults(handler=run_inbox)

    p = sub.add_parser(
        "send",
        parents=[parent],
        help="send a message to the lead or a teammate",
        description="Append a message to NAME's inbox; prints the new message id. Both "
        "--from and --to must be `lead` or a member of the team (see `agent-cli team`): "
        "a message from a name nobody can answer, or to an inbox nobody reads, is refused.",
    )
    p.add_argument("--from", dest="sender", required=True, metavar="NAME",
                   help="who sends it: lead or a team member")
    p.add_argument("--to", dest="to", required=True, metavar="NAME",
                   help="who receives it: lead or a team member")
    p.add_argument("text", nargs="+", metavar="TEXT", help="the message")
    p.set_defaults(handler=run_send)


def _stores(args: argparse.Namespace) -> StoreSet:
    from .workdir import stores_of

    return stores_of(args)


def run_team(args: argparse.Namespace) -> int:
    roster = _stores(args).roster
    snap = roster.snapshot()
    if args.json:
        data = {
            "team": snap.team,
            "members": [{**m.model_dump(), "gone": roster.gone_reason(m)}
                        for m in snap.members],
            "problem": snap.problem,
        }
        print(safetext.dumps(data, indent=2))
    else:
        print(format_team(snap.team, snap.members, roster.gone_reason))
    if snap.problem:
        print(f"agent-cli: {snap.problem}", file=sys.stderr)
        return 1
    return 0


def format_team(team: str, members: list[Member],
                gone: Callable[[Member], str | None] | None = None) -> str:
    """The members as an aligned text table (one line when the team is empty). `gone`:
    why a member shown running is not (the roster's `gone_reason`; default: its process ended)."""
    gone_of = gone or _process_gone
    if not members:
        return f"team {team}: no members yet"
    header = ("NAME", "ROLE", "STATUS", "HOST", "TASK", "IDLE REASON", "UPDATED (UTC)")
    rows = [header]
    for m in members:
        # one table row, whatever the reason holds; shown, never interpreted
        reason = safetext.visible(" ".join(m.idle_reason.split()), one_line=True)
        if len(reason) > REASON_WIDTH:
            reason = reason[: REASON_WIDTH - 3] + "..."
        why = gone_of(m)
        rows.append(
            tuple(safetext.visible(cell, one_line=True) for cell in (
                m.name,
                m.role,
                f"gone ({why})" if why else m.status,
                m.host or "-",
                f"#{m.current_task}" if m.current_task is not None else "-",
                reason or "-",
                m.updated_at[:19].replace("T", " "),
            ))
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = [f"team {team}: {len(members)} member{'s' if len(members) != 1 else ''}"]
    for row in rows:
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    return "\n".join(lines)


def _process_gone(m: Member) -> str | None:
    """'process 4242 ended' for a member still shown running whose process has ended."""
    from ..team.liveness import member_gone

    return member_gone(m)


def run_inbox(args: argparse.Namespace) -> int:
    check_name(args.name, "inbox name")
    delivery = _stores(args).mail.fetch(args.name)
    if delivery.unusable:  # a link, FIFO, directory...: never read, one line naming it
        raise StorageError(f"{delivery.unusable}; not read")
    for problem in delivery.problems:
        print(f"agent-cli: warning: {problem}", file=sys.stderr)
    messages = delivery.messages
    if args.json:
        data = [json.loads(m.to_line()) for m in messages]
        print(safetext.dumps(data, indent=2))
        return 0
    if not messages:
        print(f"no unread messages for {args.name}")
        return 0
    count = len(messages)
    print(f"{count} unread message{'s' if count != 1 else ''} for {args.name}:")
    for m in messages:
        print(format_message(m))
    return 0


def format_message(m: MailMessage) -> str:
    """One line: time, sender, type (and request id), content."""
    content = safetext.visible(" ".join(m.content.split()), one_line=True)
    if len(content) > CONTENT_WIDTH:
        content = content[: CONTENT_WIDTH - 3] + "..."
    kind = m.type
    if m.request_id:
        kind += f" {m.request_id[:8]}"
    if m.approve is not None:
        kind += " approve" if m.approve else " reject"
    return safetext.visible(f"  {m.ts[11:19]}  {m.sender} [{kind}]: ", one_line=True) + content


def run_send(args: argparse.Namespace) -> int:
    sender = check_name(args.sender, "sender name")
    to = check_name(args.to, "recipient name")
    text = " ".join(args.text).strip()
    if not text:
        raise UserError("refusing to send an empty message")
    stores = _stores(args)
    snap = stores.roster.snapshot()
    known = [LEAD, *(m.name for m in snap.members if m.name != LEAD)]
    for role, name in (("recipient", to), ("sender", sender)):
        if name not in known:
            raise NotFound(f"no teammate {name!r} on team {snap.team} to be the {role} "
                           f"(known: {', '.join(known)})")
    msg = stores.mail.send(sender, to, text)
    print(msg.id)
    return 0
