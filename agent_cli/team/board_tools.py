"""Board tools: create, update, list, show, claim and complete tasks on the shared board.

The handlers are methods of BoardTools, bound to the Team (and its runtime's board, roster,
mailbox, worktrees and hooks) when the tool set is built; the ToolContext only says who
calls. The owner in claim/complete is always the caller's own name (ctx.agent), whatever the
input says. Refusals (not claimable, wrong owner or token, failed verify) are is_error tool
results, never exceptions that kill an agent. The board announces every change itself.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from ..board import routing
from ..board.models import Verify
from ..board.route_args import ASSIGNEE_MEANS, PLAN_MEANS, ROLE_MEANS, reroutes
from ..errors import AgentCliError, CorruptFile, ToolError, UserError
from ..events import MessageEvent
from ..names import LEAD
from ..shorten import shorten
from ..tools.base import Tool, ToolContext, ToolOutput
from .assignments import marks, routed
from .complete import complete_task
from .landing import LandingRefused
from .verify import VerifyFailed

if TYPE_CHECKING:
    from ..board.models import Task
    from .manager import Team


class _Input(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid")


class CreateTaskInput(_Input):
    subject: str = Field(min_length=1, max_length=200, description="short imperative title")
    description: str = Field("", description="what done means, inputs, where to look")
    blocked_by: list[int] = Field(default_factory=list, description="ids that must complete first")
    verify: Verify | None = Field(None, description="how the host checks completion")
    assignee: str | None = Field(
        None, description=f"{ASSIGNEE_MEANS} (a name; it may be spawned later)"
    )
    role: str | None = Field(None, description=ROLE_MEANS)
    require_plan: bool = Field(False, description=PLAN_MEANS)


class UpdateTaskInput(_Input):
    task_id: int
    add_blocked_by: list[int] = Field(default_factory=list)
    assignee: str | None = Field(None, description='reassign (pending tasks only); "" clears')
    role: str | None = Field(None, description='restrict to a role (pending only); "" clears')
    require_plan: bool | None = Field(None, description="set or clear the plan requirement")


class ListTasksInput(_Input):
    pass


class GetTaskInput(_Input):
    task_id: int


class ClaimTaskInput(_Input):
    task_id: int | None = Field(None, description="omit to claim the lowest claimable task")


class CompleteTaskInput(_Input):
    task_id: int
    claim_token: str = Field(min_length=1)
    result: str = Field(min_length=1, description="what you did and the evidence")


def user_errors(fn):
    """Turn a UserError/CorruptFile raised by the board or team into an is_error result."""

    @functools.wraps(fn)
    def wrapper(*args):
        try:
            return fn(*args)
        except (UserError, CorruptFile) as exc:
            raise ToolError(str(exc)) from exc

    return wrapper


def task_line(t: Task) -> str:
    line = f"#{t.id} [{t.status}] {t.subject}"
    if t.owner:
        line += f" (owner {t.owner})"
    if t.blocked_by:
        line += " blocked by " + ", ".join(f"#{i}" for i in t.blocked_by)
    routed = routing.describe(t)
    if routed:
        line += f" [{routed}]"
    return line


def _task_detail(t: Task, viewer: str) -> str:
    lines = [task_line(t)]
    if t.description:
        lines.append(f"description: {t.description}")
    if t.verify is not None:
        lines.append(f"verify: {t.verify.model_dump_json(exclude_none=True)}")
    if t.claimed_at:
        lines.append(f"claimed_at: {t.claimed_at}")
    if t.claim_token and t.owner == viewer:
        lines.append(f"claim_token: {t.claim_token}")
    if t.result:
        lines.append(f"result: {t.result}")
    return "\n".join(lines)


class BoardTools:
    """The board tools' handlers, bound to one Team and its runtime's shared state."""

    def __init__(self, team: Team) -> None:
        self.team = team
        self.rt = team.rt

    def _hook_refusal(self, event: str, ctx: ToolContext, fields: dict) -> str | None:
        hooks = getattr(self.rt, "hooks", None)
        return hooks.refusal(event, ctx.agent, fields, ctx.cancel) if hooks is not None else None

    def _touch_teammate(self, name: str) -> None:
        """Refresh a teammate's roster entry after a claim/complete made through a tool."""
        tm = self.team.teammate(name)
        if tm is not None:
            tm.refresh_task()

    @user_errors
    def create(self, args: CreateTaskInput, ctx: ToolContext) -> str:
        rt = self.rt
        route = routed(rt.roster, args.assignee, args.role, args.require_plan)
        verify = args.verify
        if verify is not None:  # the model wrote it, whatever it says about itself
            verify = verify.model_copy(update={"set_by": ctx.agent})
        why = self._hook_refusal("TaskCreated", ctx, {
            "task": {"id": None, "subject": args.subject}, "task_subject": args.subject,
            "task_description": args.description, "blocked_by": args.blocked_by,
            "assignee": args.assignee, "role": args.role})
        if why is not None:
            raise ToolError(f"task not created: a TaskCreated hook refused it: {why}")
        task = rt.board.create(
            args.subject,
            args.description,
            args.blocked_by,
            verify,
            actor=ctx.agent,
            **route,
        )
        return f"created task #{task.id}: {task_line(task)}"

    @user_errors
    def update(self, args: UpdateTaskInput, ctx: ToolContext) -> str:
        rt = self.rt
        if not args.add_blocked_by and not reroutes(args.assignee, args.role, args.require_plan):
            raise ToolError(
                "nothing to update: give add_blocked_by, assignee, role or require_plan")
        task = rt.board.update(
            args.task_id,
            add_blocked_by=args.add_blocked_by,
            actor=ctx.agent,
            **routed(rt.roster, args.assignee, args.role, args.require_plan),
        )
        return f"updated: {task_line(task)}"

    @user_errors
    def list_all(self, args: ListTasksInput, ctx: ToolContext) -> str:
        snap = self.rt.board.snapshot()
        stranded = marks(self.rt, snap.tasks)
        lines = [
            task_line(t) + (f" — {stranded[t.id]}" if t.id in stranded else "")
            for t in snap.tasks
        ] or ["(no tasks)"]
        lines.extend(f"problem: {p.path}: {p.message}" for p in snap.problems)
        return "\n".join(lines)

    @user_errors
    def get(self, args: GetTaskInput, ctx: ToolContext) -> str:
        return _task_detail(self.rt.board.get(args.task_id), ctx.agent)

    @user_errors
    def claim(self, args: ClaimTaskInput, ctx: ToolContext) -> str:
        rt = self.rt
        with self.team.claims.attempt() as allowed:  # the same gate as automatic claims
            if not allowed:
                raise ToolError("nothing claimed: the team is shutting down")
            role = self.claimer_role(ctx.agent, ctx.role)
            if args.task_id is None:
                res = rt.board.claim_next(ctx.agent, role=role)
                if res.task is None:
                    raise ToolError(f"nothing claimed: {res.reason}")
                task = res.task
            else:
                task = rt.board.claim(args.task_id, ctx.agent, role=role)
        where = rt.worktrees.prepare(task, ctx.agent)  # its worktree ("" outside git)
        self._touch_teammate(ctx.agent)
        note = "\nIt requires a plan: submit_plan before changing anything." * task.require_plan
        return (f"claimed task #{task.id} ({task.subject}); claim_token: {task.claim_token}"
                f"{note}{where}")

    @user_errors
    def complete(self, args: CompleteTaskInput, ctx: ToolContext) -> str | ToolOutput:
        tm = self.team.teammate(ctx.agent)
        gate = tm.gate if tm is not None else None
        try:
            text = complete_task(self.rt, ctx, args.task_id, args.claim_token, args.result, gate)
        except VerifyFailed as exc:
            if tm is not None:
                tm.note_blocked(f"verify failed: {exc.detail}")
            raise
        except LandingRefused as exc:  # a conflict or a failed verify on the merged state
            if tm is not None:
                tm.note_blocked(f"landing refused: {shorten(str(exc).splitlines()[0], 200)}")
            raise
        if ctx.agent != LEAD:
            text += self._report_result(ctx.agent, args.task_id, args.result)
        self._touch_teammate(ctx.agent)
        if ctx.agent == LEAD:
            return text
        # The result already went to the lead: a teammate's turn ends here, with no request
        # for a closing text; its next turn opens with this result and its next task.
        return ToolOutput(text, end_turn=True)

    def _report_result(self, agent: str, task_id: int, result: str) -> str:
        """Send the lead the `result` message; the task is completed whatever happens here,
        so a failure is a note on the success text (tell the lead with send_message)."""
        rt = self.rt
        try:
            subject = rt.board.get(task_id).subject
            content = f"task #{task_id} ({subject}) completed: {result}"
            content += rt.worktrees.result_note(task_id)  # the files it landed
            rt.mail.send(agent, LEAD, content, type="result")
        except (AgentCliError, OSError) as exc:
            return (f"\nnote: the result message to the lead could not be sent ({exc}); "
                    "tell the lead")
        rt.events.emit(MessageEvent(agent=agent, to=LEAD, msg_type="result",
                                    preview=content[:120]))
        return ""

    def claimer_role(self, name: str, fallback: str = "") -> str | None:
        """The role `name` claims as: its running teammate's, else the roster's, else
        fallback."""
        mate = self.team.teammate(name)
        if mate is not None:
            return mate.role
        member = self.rt.roster.get(name)
        if member is not None:
            return member.role
        return fallback or None


def _tool(name, description, model, handler, read_only=False) -> Tool:
    return Tool(
        name=name, description=description, input_model=model, handler=handler, read_only=read_only
    )


def create_task_tool(team: Team) -> Tool:
    return _tool(
        "create_task",
        "Register a task on the shared board. Unassigned tasks go to whichever teammate is "
        "free (lowest id first). blocked_by lists task ids that must be completed first. "
        "verify (optional) is a shell command plus the expected stdout (or a file holding it) "
        "and exit code; the host runs it when the owner calls complete_task and completes the "
        "task only if it passes. Set assignee when one named teammate must do it (it may be "
        "spawned after), role when only a specialist role may take it, and require_plan when "
        "whoever takes it must get a plan for it approved first (the host enforces all three).",
        CreateTaskInput,
        BoardTools(team).create,
    )


def update_task_tool(team: Team) -> Tool:
    return _tool(
        "update_task",
        "Change a task that is still pending and unowned: add dependencies, reassign it "
        '(assignee, "" to clear), restrict it to a role ("" to clear), or set require_plan. '
        "A task in progress cannot be reassigned.",
        UpdateTaskInput,
        BoardTools(team).update,
    )


def list_tasks_tool(team: Team) -> Tool:
    return _tool(
        "list_tasks",
        "List every task on the board: id, status, owner, blockers.",
        ListTasksInput,
        BoardTools(team).list_all,
        read_only=True,
    )


def get_task_tool(team: Team) -> Tool:
    return _tool(
        "get_task",
        "Show one task in full (your claim_token if you own it).",
        GetTaskInput,
        BoardTools(team).get,
        read_only=True,
    )


def claim_task_tool(team: Team) -> Tool:
    return _tool(
        "claim_task",
        "Claim a pending task whose blockers are all completed (omit task_id for the lowest "
        "claimable one you may take: a task assigned to someone else or for another role is "
        "not yours). You hold at most one task at a time. Returns the claim_token.",
        ClaimTaskInput,
        BoardTools(team).claim,
    )


def complete_task_tool(team: Team) -> Tool:
    return _tool(
        "complete_task",
        "Complete the task you own with its claim_token and a short result. If the task has a "
        "verify, the host runs it first and completes only if it passes; otherwise you get "
        "the failure and keep the task.",
        CompleteTaskInput,
        BoardTools(team).complete,
    )


def lead_board_tools(team: Team) -> list[Tool]:
    return [create_task_tool(team), update_task_tool(team), list_tasks_tool(team),
            get_task_tool(team)]


def teammate_board_tools(team: Team) -> list[Tool]:
    return [list_tasks_tool(team), get_task_tool(team), claim_task_tool(team),
            complete_task_tool(team)]
