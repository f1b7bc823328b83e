"""Rich renderables for the state slash commands show: tasks, one task, team, inbox, cost,
permissions. Pure functions of the data passed in (no runtime access), easy to test.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from ..board import routing
from ..safetext import visible
from .style import agent_style, shorten
from .toolbar import open_blockers, task_state

TASK_MARKS = {
    "pending": ("[ ]", ""),
    "in_progress": ("[>]", "yellow"),
    "completed": ("[x]", "green"),
    "blocked": ("[!]", "red"),
}


def tasks_table(
    tasks: list[Any], problems: list[Any], marks: dict[int, str] | None = None,
    places: dict[int, str] | None = None,
) -> Table | Text:
    """`[ ]` pending, `[>]` in progress, `[x]` completed, `[!]` blocked; corrupt files as rows.
    A "for" column when a task says who may take it; `marks` flag tasks nobody running may
    take ("assigned to writer, who is not running"); a "where" column (worktree, landed,
    landing refused) when `places` has any."""
    if not tasks and not problems:
        return Text("No tasks yet. Ask the lead to plan some work.", style="dim")
    by_id = {t.id: t for t in tasks}
    marks = marks or {}
    routed = any(routing.short(t) for t in tasks)
    table = Table(title="Tasks", title_justify="left", show_edge=False, pad_edge=False)
    where = {t.id: (places or {}).get(t.id, "") for t in tasks}
    cols = ("", "#", "subject", "owner", *(("for",) if routed else ()), "blocked by", "result")
    for col in cols + (("where",) if any(where.values()) else ()):
        table.add_column(col, overflow="fold" if col in ("subject", "for") else "ellipsis")
    for t in tasks:
        state = task_state(t, by_id)
        mark, style = TASK_MARKS[state]
        blockers = open_blockers(t, by_id) if state == "blocked" else []
        table.add_row(
            Text(mark, style=style),
            str(t.id),
            visible(t.subject, one_line=True),
            Text(f"@{t.owner}", style=agent_style(t.owner)) if t.owner else "",
            *((_for_cell(t, marks.get(t.id)),) if routed else ()),
            ", ".join(f"#{b}" for b in blockers),
            shorten(t.result or "", 50),
            *([shorten(where[t.id], 40)] if any(where.values()) else []),
        )
    for p in problems:
        table.add_row(
            Text("[?]", style="bold red"),
            str(p.task_id) if p.task_id is not None else "?",
            Text(f"unreadable: {visible(p.path, one_line=True)}", style="red"),
            "",
            *(("",) if routed else ()),
            "",
            Text(shorten(p.message, 50), style="red"),
        )
    return table


def _for_cell(task: Any, mark: str | None) -> Text:
    text = Text(visible(routing.short(task), one_line=True))
    if mark:
        text.append(f" ({mark})", style="bold red")
    return text


def task_detail(task: Any, by_id: dict[int, Any]) -> Table:
    state = task_state(task, by_id)
    mark, style = TASK_MARKS[state]
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="dim")
    grid.add_column()
    subject = visible(task.subject, one_line=True)
    grid.add_row("task", Text(f"{mark} #{task.id} {subject}", style=style or "bold"))
    grid.add_row("status", state.replace("_", " "))
    if task.owner:
        grid.add_row("owner", Text(f"@{task.owner}", style=agent_style(task.owner)))
    if task.blocked_by:
        grid.add_row("blocked by", ", ".join(f"#{b}" for b in task.blocked_by))
    if task.description:
        grid.add_row("description", visible(task.description))
    if getattr(task, "verify", None) is not None:
        grid.add_row("verify", f"`{visible(task.verify.command)}`")
    if routing.short(task):
        grid.add_row("for", visible(routing.short(task), one_line=True))
    if task.result:
        grid.add_row("result", visible(task.result))
    grid.add_row("updated", str(task.updated_at))
    return grid


def team_table(lead_row: tuple[str, int] | None, members: list[Any],
               gone: Callable[[Any], str | None] | None = None) -> Table:
    """name, role, state, host, current task, idle reason, tokens (lead first when given).
    `gone`: why a member shown running is not (the roster's `gone_reason`; default: its
    process ended). The host says where a teammate runs (another machine on a database
    board; this one's for the lead)."""
    from ..team.liveness import this_host

    table = Table(title="Team", title_justify="left", show_edge=False, pad_edge=False)
    for col in ("name", "role", "state", "host", "task", "idle reason", "tokens"):
        table.add_column(col, justify="right" if col == "tokens" else "left")
    if lead_row is not None:
        state, tokens = lead_row
        table.add_row(Text("lead", style=agent_style("lead")), "lead", state,
                      visible(this_host(), one_line=True), "", "", f"{tokens:,}")
    if gone is None:
        from ..team.liveness import member_gone as gone
    for m in members:
        style = {"failed": "red", "working": "yellow", "shutdown": "dim"}.get(m.status, "")
        state = m.status.replace("_", " ")
        if (why := gone(m)) is not None:
            state, style = f"gone ({why})", "red"
        table.add_row(
            Text(visible(m.name, one_line=True), style=agent_style(m.name)),
            visible(m.role, one_line=True),
            Text(state, style=style),
            visible(getattr(m, "host", None) or "", one_line=True),
            f"#{m.current_task}" if m.current_task else "",
            shorten(m.idle_reason or "", 60),
            f"{int(m.tokens or 0):,}",
        )
    return table


def inbox_table(messages: list[Any]) -> Table | Text:
    if not messages:
        return Text("No unread messages for the lead.", style="dim")
    table = Table(
        title=f"Lead inbox: {len(messages)} unread (peek only, nothing consumed)",
        title_justify="left", show_edge=False, pad_edge=False,
    )
    for col in ("from", "type", "message", "sent"):
        table.add_column(col)
    for m in messages:
        table.add_row(
            Text(visible(m.sender, one_line=True), style=agent_style(m.sender)),
            visible(m.type.replace("_", " "), one_line=True),
            shorten(m.content, 70),
            str(m.ts)[11:19],
        )
    return table


def cost_table(lead_rows: list[dict[str, Any]], members: list[Any], prices: Any) -> Group:
    """Tokens and dollars per agent and in total (`prices`: a pricing.PriceTable). An agent
    whose model the table does not know shows its tokens and "-" for the cost."""
    from ..pricing import combine, price_rows, totals

    table = Table(title="Tokens and cost", title_justify="left", show_edge=False, pad_edge=False)
    for col in ("agent", "model", "input", "output", "cache write", "cache read", "total",
                "cost"):
        table.add_column(col, justify="left" if col in ("agent", "model") else "right")
    costs = []
    agents = [("lead", lead_rows)]
    agents += [(m.name, _member_rows(m)) for m in members]
    for name, rows in agents:
        cost = price_rows(rows, prices)
        costs.append(cost)
        t = totals(rows)
        models = sorted({str(r.get("model") or "?") for r in rows if isinstance(r, dict)}) or ["-"]
        table.add_row(
            Text(name, style=agent_style(name)), ", ".join(models),
            f"{t['input_tokens']:,}", f"{t['output_tokens']:,}",
            f"{t['cache_creation_input_tokens']:,}", f"{t['cache_read_input_tokens']:,}",
            f"{cost.tokens:,}", cost.text(),
        )
    total = combine(costs)
    table.add_section()
    table.add_row(Text("total", style="bold"), "", "", "", "", "",
                  Text(f"{total.tokens:,}", style="bold"), Text(total.text(), style="bold"))
    note = f"prices per million tokens from pricing.json (checked {prices.checked})"
    if total.unpriced_models:
        note += f"; no price for {', '.join(total.unpriced_models)}: tokens only"
    return Group(table, Text(note, style="dim"))


def _member_rows(member: Any) -> list[dict[str, Any]]:
    from ..pricing import member_rows

    return member_rows(getattr(member, "spend", None), int(member.tokens or 0), member.model)


def extra_dirs_table(dirs: list[Any]) -> Table:
    """/permissions: the additional directories the file tools may read and write."""
    table = Table(title="Additional directories (the file tools work there too)",
                  title_justify="left", show_edge=False, pad_edge=False)
    for col in ("directory", "source"):
        table.add_column(col)
    for d in dirs:
        table.add_row(visible(str(d.path), one_line=True),
                      visible(d.source.removeprefix("settings: "), one_line=True))
    return table


def permissions_table(mode: str, entries: list[Any]) -> Table | Text:
    title = f"Permission mode: {mode}"
    if not entries:
        return Text(f"{title}\nNo allow or deny rules: every shell command and file write asks.")
    table = Table(title=title, title_justify="left", show_edge=False, pad_edge=False)
    for col in ("effect", "rule", "layer", "source"):
        table.add_column(col)
    order = {"deny": 0, "ask": 1, "allow": 2}
    styles = {"deny": "red", "ask": "yellow", "allow": "green"}
    for e in sorted(entries, key=lambda e: (order.get(e.effect, 3), e.source)):
        layer = getattr(e, "layer", "") or e.source
        parsed = getattr(e, "parsed", None)
        source = e.source if parsed is None or parsed.applicable else (
            f"{e.source} (not applicable here)")
        table.add_row(Text(e.effect, style=styles.get(e.effect, "")),
                      visible(e.rule, one_line=True), layer, visible(source, one_line=True))
    return table
