"""How `agent-cli tasks list` and `tasks show` print the board: the table and one task's page."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..safetext import visible

if TYPE_CHECKING:
    from ..board.models import Problem, Task, Verify

MARKERS = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]"}
BLOCKED, BROKEN = "[!]", "[E]"
LEGEND = "[ ] pending  [>] in progress  [x] completed  [!] blocked  [E] unreadable file"

Row = tuple[int, list[str]]  # (task id, its cells)


def _cut(text: str, width: int) -> str:
    text = visible(" ".join(text.split()), one_line=True)
    return text if len(text) <= width else text[: width - 1] + "…"


def render_table(
    tasks: list[Task], problems: list[Problem], marks: dict[int, str] | None = None,
    where: Any = None,
) -> str:
    """The `tasks list` table: one row per task, an [E] row per unreadable file; a FOR column
    when a task says who may take it, and a note per task nobody running may take (`marks`);
    a WHERE column (`where(task_id)`: worktree, landed, landing refused) when a task has one."""
    from ..board import routing

    routed = any(routing.short(t) for t in tasks)
    by_id = {t.id: t for t in tasks}
    rows = _task_rows(tasks, by_id, routed) + _broken_rows(problems, by_id)
    if not rows:
        return "no tasks on the board"
    extra = _where_cells(rows, tasks, where)
    rows.sort(key=lambda r: r[0])
    header = ["", "ID", "SUBJECT", "OWNER", *(["FOR"] if routed else []), "BLOCKED BY", "RESULT",
              *extra]
    sized = [header] + [r[1] for r in rows if r[1][0] != BROKEN]
    widths = [max(len(c[i]) for c in sized) for i in range(len(header))]
    widths[1] = max(widths[1], *(len(r[1][1]) for r in rows))
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=False)).rstrip()
        for row in [header] + [r[1] for r in rows]
    ]
    for tid, why in sorted((marks or {}).items()):
        lines.append(f"note: #{tid} is {why}")
    for prob in problems:
        if prob.task_id in by_id:
            lines.append(f"problem: {prob.line()}")
    if problems:
        lines.append(f"{len(problems)} problem(s): run `agent-cli tasks doctor`")
    lines.append(LEGEND)
    return "\n".join(lines)


def _task_rows(tasks: list[Task], by_id: dict[int, Task], routed: bool) -> list[Row]:
    """One row per readable task: marker, id, subject, owner, [for], blocked by, result."""
    from ..board import dag, routing

    rows: list[Row] = []
    for task in tasks:
        waiting = dag.waiting_on(task, by_id) if task.status == "pending" else []
        marker = BLOCKED if waiting else MARKERS[task.status]
        rows.append((task.id, [
            marker,
            f"#{task.id}",
            _cut(task.subject, 40),
            _cut(task.owner or "-", 40),
            *([_cut(routing.short(task), 60) or "-"] if routed else []),
            dag.ids_text(waiting) or "-",
            _cut(task.result or "", 30) or "-",
        ]))
    return rows


def _broken_rows(problems: list[Problem], by_id: dict[int, Task]) -> list[Row]:
    """An [E] row per unreadable task file (its own row, in id order)."""
    rows: list[Row] = []
    for prob in problems:
        if prob.task_id not in by_id:
            tid = prob.task_id or 0
            cells = [BROKEN, f"#{tid}" if tid else "?",
                     visible(f"unreadable {prob.path}: {prob.message}", one_line=True)]
            rows.append((tid, cells))
    return rows


def _where_cells(rows: list[Row], tasks: list[Task], where: Any) -> list[str]:
    """Append each task row's WHERE cell (worktree, landed, landing refused); the header
    cells to add: none when no task has a place."""
    places = {t.id: where(t.id) for t in tasks} if where is not None else {}
    if not any(places.values()):
        return []
    for tid, cells in rows:
        if cells[0] != BROKEN:
            cells.append(_cut(places.get(tid, ""), 40) or "-")
    return ["WHERE"]


def render_task(task: Task) -> str:
    """`tasks show`: one `field: value` line per field that says something."""
    from ..board import dag

    fields = [
        ("task", f"#{task.id} {task.subject}"),
        ("status", task.status),
        ("owner", task.owner or "-"),
        ("blocked by", dag.ids_text(task.blocked_by) or "-"),
        ("created", task.created_at),
        ("updated", task.updated_at),
        ("claimed", task.claimed_at or "-"),
        ("claim token", task.claim_token or "-"),
        ("lease until", task.lease_expires_at or "-"),
        ("result", task.result if task.result is not None else "-"),
        *routing_fields(task),
    ]
    if task.verify is not None:
        fields.append(("verify", verify_text(task.verify)))
    if task.description:
        fields.append(("description", task.description))
    return "\n".join(f"{k + ':':<13}{visible(val)}" for k, val in fields)


def verify_text(v: Verify) -> str:
    """The verify row: the command and what it expects ('exit 0', "stdout 'ok'"), who set it."""
    expect = (
        f"stdout {v.expected_stdout!r}"
        if v.expected_stdout is not None
        else f"stdout of {v.expected_stdout_file}"
        if v.expected_stdout_file
        else ""
    )
    exit_text = f"exit {v.expected_exit_code}" if v.expected_exit_code is not None else ""
    expects = ", ".join(filter(None, [expect, exit_text])) or "nothing"
    by = f", set by {v.set_by}" if v.set_by else ""
    return f"{v.command}  (expects {expects}{by})"


def routing_fields(task: Any) -> list[tuple[str, str]]:
    """`tasks show` rows for the routing fields that are set."""
    rows = []
    if task.assignee is not None:
        rows.append(("assignee", task.assignee))
    if task.role is not None:
        rows.append(("role", task.role))
    if task.require_plan:
        rows.append(("plan", "required (approved for this task before any change)"))
    return rows
