"""The frames of `agent-cli watch`: board columns, team, events. Pure functions of a
WatchState, a size and the time, so the live view and `--once` draw the same thing.

Board: pending (blocked ones say what blocks them), in progress (owner, for how long, lease
and worktree where the task has them), completed (owner, first line of the result). A
column that does not fit shows its most recently active tasks first and says how many are
hidden. Team: each teammate's state, tokens and cost. Footer: the last board events and the
lead's unread count.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from ..board import dag, routing
from ..pricing import PriceTable, combine, member_rows, price_rows
from ..safetext import visible
from .style import agent_style
from .watch_layout import Panes, budget

EVENT_ROWS = 8  # in a --once frame; a live one shows what fits (see watch_layout)


@dataclass(frozen=True)
class Entry:
    """One task in a column: two lines, and when it last changed (for overflow order)."""

    task_id: int
    updated: str
    title: Text
    detail: Text


def parse_time(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def ago(start: str | None, now: datetime) -> str:
    """How long since `start` (see span; '?' when unknown)."""
    when = parse_time(start)
    if when is None:
        return "?"
    return span(max(0, int((now - when).total_seconds())))


def span(seconds: int) -> str:
    """'42s', '3m', '2h10m': coarse past a minute, so an idle view redraws rarely."""
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def in_progress(state: Any) -> list[Any]:
    return [t for t in state.board.tasks if t.status == "in_progress"]


def _trees(state: Any) -> dict[int, str]:
    return getattr(state, "worktrees", None) or {}


def clock_key(working: list[Any], now: datetime, trees: dict[int, str] | None = None) -> tuple:
    """Everything in a frame that changes with time alone (`working`: the in-progress
    tasks): redraw only when it differs."""
    trees = trees or {}
    return (now.strftime("%H:%M"),
            tuple(progress_entry(t, now, trees.get(t.id, "")).detail.plain for t in working))


def _first_line(text: str | None) -> str:
    for line in (text or "").splitlines():
        if line.strip():
            return line.strip()
    return ""


def _title(task: Any) -> Text:
    return Text(f"#{task.id} {visible(task.subject, one_line=True)}")


def _owner(name: str | None) -> Text:
    return Text(f"@{name}", style=agent_style(name)) if name else Text("")


def pending_entry(task: Any, tasks: dict[int, Any]) -> Entry:
    waits = dag.waiting_on(task, tasks)
    if waits:
        detail = Text(f"blocked by {dag.ids_text(waits)}", style="red")
    else:
        detail = Text("ready to claim", style="green")
    route = routing.short(task)
    if route:
        detail.append(f" for {route}", style="magenta")
    return Entry(task.id, task.updated_at, _title(task), detail)


def progress_entry(task: Any, now: datetime, tree: str = "") -> Entry:
    """`tree`: the state of the task's worktree ("active", "landing", "refused"), if any."""
    detail = _owner(task.owner)
    detail.append(f" {ago(task.claimed_at, now)}", style="yellow")
    lease = parse_time(getattr(task, "lease_expires_at", None))
    if lease is not None:
        left = int((lease - now).total_seconds())
        if left >= 0:
            detail.append(f" lease {span(left)} left", style="dim")
        else:
            detail.append(f" lease expired {span(-left)} ago", style="bold red")
    where = _worktree_text(getattr(task, "worktree", None)) or (f"task-{task.id}" if tree
                                                                else "")
    if where:
        detail.append(f" wt {where}", style="dim")
    if tree in ("landing", "refused"):
        detail.append(f" {'landing' if tree == 'landing' else 'landing refused'}",
                      style="magenta" if tree == "landing" else "red")
    return Entry(task.id, task.updated_at, _title(task), detail)


def _worktree_text(value: Any) -> str:
    if isinstance(value, str):
        return value.rstrip("/").rsplit("/", 1)[-1]
    if isinstance(value, dict):
        for key in ("branch", "path", "state"):
            if value.get(key):
                return _worktree_text(str(value[key]))
    return ""


def done_entry(task: Any) -> Entry:
    detail = _owner(task.owner)
    result = _first_line(task.result)
    if result:
        detail.append(f": {result}", style="dim")
    return Entry(task.id, task.updated_at, _title(task), detail)


def fit(tasks: list[Any], rows: int | None,
        written: dict[int, int] | None = None) -> tuple[list[Any], int]:
    """The tasks to show in `rows` lines (two lines each) and how many are hidden: by id
    when all fit, else the most recently changed first. Two writes in one millisecond have
    equal times: `written` (task id -> the board's write seq) orders them as committed."""
    if rows is None or 2 * len(tasks) <= rows:
        return sorted(tasks, key=lambda t: t.id), 0
    order = written or {}
    keep = max(0, (rows - 1) // 2)
    newest = heapq.nlargest(keep, tasks, key=lambda t: (t.updated_at, order.get(t.id, -1), t.id))
    return newest, len(tasks) - keep


def board_table(state: Any, rows: int | None, now: datetime) -> Table:
    snap = state.board
    tasks = snap.by_id()
    columns = {name: [t for t in snap.tasks if t.status == status]
               for name, status in (("pending", "pending"), ("in progress", "in_progress"),
                                    ("completed", "completed"))}
    blocked = sum(1 for t in columns["pending"] if dag.waiting_on(t, tasks))
    trees = _trees(state)
    makers = {"pending": lambda t: pending_entry(t, tasks),
              "in progress": lambda t: progress_entry(t, now, trees.get(t.id, "")),
              "completed": done_entry}
    table = Table(box=box.SIMPLE_HEAD, expand=True, show_edge=False, pad_edge=False,
                  padding=(0, 1))
    styles = {"pending": "bold", "in progress": "bold yellow", "completed": "bold green"}
    cells = []
    for name, column in columns.items():
        head = f"{name} ({len(column)}"
        head += f", {blocked} blocked)" if name == "pending" and blocked else ")"
        table.add_column(Text(head, style=styles[name]), ratio=1, no_wrap=True,
                         overflow="ellipsis")
        shown, hidden = fit(column, rows, getattr(state, "written", None))
        lines: list[Text] = []
        for e in map(makers[name], shown):  # entries only for what is shown
            lines += [e.title, Text("  ").append_text(e.detail)]
        if hidden:
            lines.append(Text(f"+{hidden} older", style="dim"))
        cells.append(Text("\n").join(lines) if lines else Text("-", style="dim"))
    table.add_row(*cells)
    return table


def member_state(member: Any, alive: bool, here: str = "") -> Text:
    """What a teammate is doing; "gone" when its status says it runs but its process (on
    this host) does not. A process on another host cannot be checked: its status is shown."""
    status = member.status
    if status in ("shutdown", "failed"):
        text = "shut down" if status == "shutdown" else "failed"
        if status == "failed" and member.idle_reason:
            text += f": {visible(member.idle_reason, one_line=True)}"
        return Text(text, style="dim" if status == "shutdown" else "bold red")
    elsewhere = bool(member.host and here and member.host != here)
    if not alive and not elsewhere:
        was = f", was on #{member.current_task}" if member.current_task else ""
        why = f"process {member.pid} ended" if member.pid else "not running"
        return Text(f"gone ({why}{was})", style="red")
    text = _running_state(member)
    if elsewhere:
        text.append(f" (on {member.host})", style="dim")
    return text


def _running_state(member: Any) -> Text:
    status = member.status
    if status == "working":
        on = f" on #{member.current_task}" if member.current_task else ""
        return Text(f"working{on}", style="yellow")
    if status == "waiting_plan":
        return Text("waiting for plan approval", style="magenta")
    reason = f": {visible(member.idle_reason, one_line=True)}" if member.idle_reason else ""
    return Text(f"idle{reason}", style="cyan")


def team_table(state: Any, prices: PriceTable, rows: int | None) -> Table:
    members = state.members
    title = f"team {state.team} ({len(members)})"
    table = Table(box=box.SIMPLE_HEAD, expand=True, show_edge=False, pad_edge=False,
                  padding=(0, 1))
    table.add_column(Text(title, style="bold"), no_wrap=True, max_width=18)
    table.add_column("state", ratio=1, no_wrap=True, overflow="ellipsis")
    table.add_column("tokens", justify="right", no_wrap=True)
    table.add_column("cost", justify="right", no_wrap=True)
    costs = []
    lead = getattr(state, "lead", None)
    if lead is not None:
        cost = price_rows(lead.get("spend") or [], prices)
        costs.append(cost)
        where = "in a session" if state.lead_alive else "session ended"
        if lead.get("model"):
            where += f" ({lead['model']})"
        table.add_row(Text("lead", style=agent_style("lead")), Text(where, style="dim"),
                      f"{cost.tokens:,}", cost.text())
    shown = members if rows is None else members[:rows]
    mate_costs = [price_rows(member_rows(m.spend, int(m.tokens or 0), m.model), prices)
                  for m in members]
    costs += mate_costs
    for m, cost in zip(shown, mate_costs, strict=False):
        table.add_row(Text(m.name, style=agent_style(m.name)),
                      member_state(m, state.alive.get(m.name, False),
                                   getattr(state, "host", "")),
                      f"{cost.tokens:,}", cost.text())
    if len(shown) < len(members):
        table.add_row(Text(f"+{len(members) - len(shown)} more", style="dim"), "", "", "")
    if state.team_problem:
        table.add_row(Text("config", style="red"), Text(state.team_problem, style="red"), "", "")
    elif not members:
        table.add_row(Text("-", style="dim"), Text("no teammates yet", style="dim"), "", "")
    if members or lead is not None:
        total = combine(costs)
        table.add_row(Text("total", style="bold"), "", f"{total.tokens:,}", total.text())
    return table


def event_line(record: dict[str, Any]) -> Text:
    when = str(record.get("time", ""))[11:19]
    actor = str(record.get("actor", "?"))
    action = str(record.get("action", "?"))
    details = record.get("details") if isinstance(record.get("details"), dict) else {}
    line = Text(f"{when} ", style="dim")
    line.append(actor, style=agent_style(actor))
    line.append(f" {action.replace('_', ' ')} #{record.get('task_id', '?')}")
    if details.get("subject") and action in ("created", "claimed"):
        line.append(" " + visible(" ".join(str(details["subject"]).split()), one_line=True),
                    style="dim")
    elif action == "completed" and details.get("unblocked"):
        line.append(f" -> unblocked {dag.ids_text(details['unblocked'])}", style="dim")
    elif details.get("reason"):
        line.append(": " + visible(" ".join(str(details["reason"]).split()), one_line=True),
                    style="dim")
    return line


def events_table(state: Any, rows: int) -> Table:
    unread = state.lead_unread
    head = Text("events", style="bold")
    head.append(f"   lead inbox: {unread} unread", style="bold magenta" if unread else "dim")
    table = Table(box=box.SIMPLE_HEAD, expand=True, show_edge=False, pad_edge=False,
                  padding=(0, 1))
    table.add_column(head, no_wrap=True, overflow="ellipsis", ratio=1)
    events = state.events[-rows:] if rows > 0 else []
    for record in events:
        table.add_row(event_line(record))
    if not events:
        table.add_row(Text("no board events yet", style="dim"))
    return table


def header(state: Any, workdir: str, now: datetime, live: bool) -> Text:
    snap = state.board
    n = len(snap.tasks)
    text = Text("agent-cli watch", style="bold", no_wrap=True, overflow="ellipsis")
    text.append(f"  {n} task{'s' if n != 1 else ''}  {now.strftime('%H:%M')} UTC")
    if live:
        text.append("  q quit  t team  m events", style="dim")
    text.append(f"  {workdir}", style="dim")
    return text


def problem_lines(state: Any, limit: int | None) -> list[Text]:
    wrap = {} if limit is None else {"no_wrap": True, "overflow": "ellipsis"}
    root = getattr(state, "root", "")
    lines = [Text(f"! {_relative(p, root).line()}", style="red", **wrap)
             for p in state.board.problems]
    if state.board_error:
        lines.insert(0, Text(f"! {state.board_error}", style="bold red", **wrap))
    if limit is not None and len(lines) > limit:
        more = len(lines) - limit + 1
        lines = lines[: limit - 1] + [Text(f"! ... {more} more problems "
                                           "(agent-cli tasks doctor)", style="red", **wrap)]
    return lines


def _relative(problem: Any, root: str) -> Any:
    prefix = root.rstrip("/") + "/"
    if root and problem.path.startswith(prefix):
        return problem.model_copy(update={"path": problem.path[len(prefix):]})
    return problem


def frame(state: Any, workdir: str, prices: PriceTable, height: int | None,
          panes: Panes, now: datetime | None = None, live: bool = False) -> RenderableType:
    """The whole view; `height` None = as tall as the content (the --once frame)."""
    now = now or datetime.now(UTC)
    parts: list[RenderableType] = [header(state, workdir, now, live)]
    problems = problem_lines(state, None if height is None else 2)
    if height is None:
        board_rows, team_rows, event_rows = None, None, EVENT_ROWS
    else:
        board_rows, team_rows, event_rows = budget(state, height, panes, len(problems))
    parts.append(board_table(state, board_rows, now))
    parts += problems
    if panes.team:
        parts.append(team_table(state, prices, team_rows))
    if panes.events:
        parts.append(events_table(state, event_rows))
    return Group(*parts)
