"""Team tools: spawn and list teammates, message them, and the shutdown and plan protocols.

Lead: spawn_teammate, list_teammates, send_message, broadcast, request_shutdown, review_plan.
Teammate: send_message, submit_plan, idle. The handlers are methods of TeamTools, bound to
the Team when the tool set is built; the sender is always the calling agent (ctx.agent).
None of them asks a human; send_message, submit_plan and idle stay allowed while a plan is
pending (plan_exempt). lead_tools(team) / teammate_tools(team) assemble each side's full set.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from ..errors import AlreadyRunning, NotFound, Refused, ToolError
from ..events import MessageEvent
from ..names import LEAD, check_name
from ..tools.base import Tool, ToolContext, ToolOutput
from . import plans
from .agent_types import spawn_listing
from .board_tools import lead_board_tools, teammate_board_tools, user_errors

if TYPE_CHECKING:
    from .manager import Team


class _Input(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid")


class SpawnTeammateInput(_Input):
    name: str = Field(description="lowercase slug, e.g. 'alice'")
    role: str = Field("", description="what this teammate is for, e.g. 'tester' "
                      "(with agent_type: defaults to the type's name)")
    agent_type: str | None = Field(None, description="an agent type from the list in this "
                                   "tool's description: its prompt, model and tools")
    prompt: str | None = Field(None, description="optional first message to the teammate")
    model: str | None = Field(None, description="optional model for this teammate")
    require_plan: bool = Field(False, description="must get a plan approved before acting")
    thinking: bool | int | None = Field(
        None, description="extended thinking for this teammate: true, false, or a budget in "
        "tokens (at least 1024); default: the session's")


class ListTeammatesInput(_Input):
    pass


class SendMessageInput(_Input):
    to: str = Field(description="'lead' or a teammate's name")
    content: str = Field(min_length=1)


class BroadcastInput(_Input):
    content: str = Field(min_length=1)


class RequestShutdownInput(_Input):
    name: str


class ReviewPlanInput(_Input):
    request_id: str = Field(min_length=1)
    approve: bool
    feedback: str = ""


class SubmitPlanInput(_Input):
    plan: str = Field(min_length=1, description="the steps you will take, files you will touch")


class IdleInput(_Input):
    pass


class TeamTools:
    """The team tools' handlers, bound to one Team and its runtime's shared state."""

    def __init__(self, team: Team) -> None:
        self.team = team
        self.rt = team.rt

    @user_errors
    def spawn(self, args: SpawnTeammateInput, ctx: ToolContext) -> str:
        from ..models.thinking import ThinkingError, for_teammate

        try:
            thinking = for_teammate(args.thinking, self.rt.config.thinking)
        except ThinkingError as exc:
            raise ToolError(str(exc)) from None
        role = self._role(args)
        try:
            member = self.team.spawn(args.name, role, args.prompt, args.model,
                                     args.require_plan, thinking)
        except AlreadyRunning:  # the teammate is there: no failure, say what did not change
            return self._already_running(args)
        note = " It must get a plan approved before acting." if member.require_plan else ""
        return (
            f"spawned {member.name} ({member.role}). It claims ready tasks from the board by "
            f"itself.{note}"
        )

    def _already_running(self, args: SpawnTeammateInput) -> str:
        member = self.rt.roster.get(args.name)
        role = member.role if member is not None else args.role
        text = (f"{args.name} is already running ({role}); nothing new was started. It claims "
                "ready tasks from the board by itself.")
        if member is not None and (member.role != args.role
                                   or member.require_plan != args.require_plan):
            text += " Its role and plan setting stay as they were."
        if args.prompt:
            text += " The prompt was not sent: send_message reaches it."
        return text

    def _role(self, args: SpawnTeammateInput) -> str:
        """The teammate's role: the agent type's name when one is asked for (the type follows
        the role: agent_types.py), else the role given."""
        if not args.agent_type:
            if not args.role.strip():
                raise ToolError("give a role (what this teammate is for) or an agent_type")
            return args.role
        from .agent_types import agent_types

        types = agent_types(self.rt)
        kind = types.get(args.agent_type)
        if kind is None:
            known = ", ".join(types.types) or "none are defined (.claude/agents/*.md)"
            raise ToolError(f"no agent type {args.agent_type!r}; available: {known}")
        return kind.name  # a role given too is replaced: the type is what routes tasks

    @user_errors
    def list_teammates(self, args: ListTeammatesInput, ctx: ToolContext) -> str:
        members = self.rt.roster.members()
        if not members:
            return "(no teammates)"
        lines = []
        for m in members:
            line = f"{m.name} ({m.role}): {m.status}"
            if m.current_task is not None:
                line += f", task #{m.current_task}"
            if m.idle_reason:
                line += f" — {m.idle_reason}"
            lines.append(line)
        return "\n".join(lines)

    def _check_recipient(self, ctx: ToolContext, to: str) -> None:
        check_name(to, "recipient name")
        if to == ctx.agent:
            raise Refused("you cannot message yourself")
        if to != LEAD and self.rt.roster.get(to) is None and self.team.teammate(to) is None:
            raise NotFound(f"no teammate {to} (list_teammates shows the team)")

    @user_errors
    def send(self, args: SendMessageInput, ctx: ToolContext) -> str:
        rt = self.rt
        self._check_recipient(ctx, args.to)
        rt.mail.send(ctx.agent, args.to, args.content, "message")
        rt.events.emit(MessageEvent(agent=ctx.agent, to=args.to, msg_type="message",
                                    preview=args.content[:120]))
        tm = self.team.teammate(ctx.agent)
        if tm is not None:
            tm.note_sent(args.to)
        return f"sent to {args.to}"

    @user_errors
    def broadcast(self, args: BroadcastInput, ctx: ToolContext) -> str:
        rt = self.rt
        names = [m.name for m in rt.roster.members() if m.status not in ("shutdown", "failed")]
        sent = rt.mail.broadcast(ctx.agent, args.content, names)
        for msg in sent:
            rt.events.emit(
                MessageEvent(
                    agent=ctx.agent, to=msg.to, msg_type="broadcast", preview=args.content[:120]
                )
            )
        if not sent:
            return "nobody to broadcast to (no active teammates)"
        return "sent to " + ", ".join(m.to for m in sent)

    @user_errors
    def request_shutdown(self, args: RequestShutdownInput, ctx: ToolContext) -> str:
        req = self.team.request_shutdown(args.name, sender=ctx.agent)
        return (
            f"shutdown requested from {args.name} (request_id {req.id}); it finishes its "
            "current step, releases any unfinished task and answers with a shutdown_response"
        )

    @user_errors
    def review_plan(self, args: ReviewPlanInput, ctx: ToolContext) -> str:
        req = plans.review_plan(self.rt, ctx.agent, args.request_id, args.approve,
                                args.feedback)
        for_task = f" for task #{req.task_id}" if req.task_id is not None else ""
        return f"plan from {req.sender}{for_task} {req.status}; {req.sender} has been told"

    @user_errors
    def submit_plan(self, args: SubmitPlanInput, ctx: ToolContext) -> str:
        req = plans.submit_plan(self.rt, ctx.agent, args.plan)
        tm = self.team.teammate(ctx.agent)
        if tm is not None:
            tm.plan_memory.note(req)
            tm.refresh_task()
        for_task = f" for task #{req.task_id}" if req.task_id is not None else ""
        return (
            f"plan submitted{for_task} (request_id {req.id}). Effectful tools stay blocked "
            "until the lead approves it; call idle to wait for the answer."
        )

    def idle(self, args: IdleInput, ctx: ToolContext) -> ToolOutput:
        mate = self.team.teammate(ctx.agent)
        reminder = mate.idle_reminder() if mate is not None else None
        if reminder is not None:  # it holds a task it neither finished nor reported: not yet
            return ToolOutput(f"not idle yet: {reminder}")
        return ToolOutput("going idle: the host wakes you with a message or a new task",
                          end_turn=True)


def _tool(name, description, model, handler, read_only=False, plan_exempt=False) -> Tool:
    return Tool(
        name=name,
        description=description,
        input_model=model,
        handler=handler,
        read_only=read_only,
        plan_exempt=plan_exempt,
    )


def spawn_teammate_tool(team: Team) -> Tool:
    return _tool(
        "spawn_teammate",
        "Start a teammate thread with its own conversation. It claims ready tasks from the "
        "board by itself; prompt (optional) is its first message. A name already running is left "
        "as it is (the result says so; its prompt is not sent); "
        "a shut-down name is restarted with its old transcript." + spawn_listing(team.rt),
        SpawnTeammateInput,
        TeamTools(team).spawn,
    )


def list_teammates_tool(team: Team) -> Tool:
    return _tool(
        "list_teammates",
        "Each teammate's status, current task and idle reason.",
        ListTeammatesInput,
        TeamTools(team).list_teammates,
        read_only=True,
    )


def send_message_tool(team: Team) -> Tool:
    return _tool(
        "send_message",
        "Send a message to the lead or one teammate's inbox.",
        SendMessageInput,
        TeamTools(team).send,
        plan_exempt=True,
    )


def broadcast_tool(team: Team) -> Tool:
    return _tool(
        "broadcast", "Send the same message to every active teammate.", BroadcastInput,
        TeamTools(team).broadcast,
    )


def request_shutdown_tool(team: Team) -> Tool:
    return _tool(
        "request_shutdown",
        "Ask a teammate to shut down. It finishes its current step first, releases an "
        "unfinished task to pending and confirms with a shutdown_response.",
        RequestShutdownInput,
        TeamTools(team).request_shutdown,
    )


def review_plan_tool(team: Team) -> Tool:
    return _tool(
        "review_plan",
        "Approve or reject a teammate's plan (request_id from its plan_approval_request). "
        "Feedback goes back to the teammate.",
        ReviewPlanInput,
        TeamTools(team).review_plan,
    )


def submit_plan_tool(team: Team) -> Tool:
    return _tool(
        "submit_plan",
        "Send your plan to the lead for approval. Until it is approved, your effectful tools "
        "are refused and you do not receive new tasks.",
        SubmitPlanInput,
        TeamTools(team).submit_plan,
        plan_exempt=True,
    )


def idle_tool(team: Team) -> Tool:
    return _tool(
        "idle",
        "End your turn and wait. The host wakes you when a message arrives or a task becomes "
        "claimable.",
        IdleInput,
        TeamTools(team).idle,
        plan_exempt=True,
    )


def lead_tools(team: Team) -> list[Tool]:
    """The lead's board and team tools (workspace tools are added by the caller)."""
    return [
        *lead_board_tools(team),
        spawn_teammate_tool(team),
        list_teammates_tool(team),
        send_message_tool(team),
        broadcast_tool(team),
        request_shutdown_tool(team),
        review_plan_tool(team),
    ]


def teammate_tools(team: Team) -> list[Tool]:
    """A teammate's board and team tools (workspace tools are added by the caller)."""
    return [
        *teammate_board_tools(team),
        submit_plan_tool(team),
        send_message_tool(team),
        idle_tool(team),
    ]
