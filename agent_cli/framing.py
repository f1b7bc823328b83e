"""The host's blocks as a model sees them, written and read back in one place: labelled
messages, the lead's inbox, auto-claimed and resumed tasks, plan reviews.

Everything a teammate or the lead receives from another agent is wrapped in a tag that names
the sender, so a model never mistakes it for the user. Content cannot close or forge a tag:
`<message`, `</message`, `<inbox` and similar openings inside content are escaped. The
readers (`split_framed`, `framed_tasks`) are the writers' inverse, for whatever must take a
framed message apart (the offline demo model), so no one else matches the host's wording.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .board.models import Task
    from .team.mailbox import MailMessage

_TAG_RE = re.compile(
    r"<(/?)(message|inbox|auto-claimed-task|resumed-task|plan-review|identity|host-reminder)\b",
    re.IGNORECASE,
)


# The lines the host puts in a task block after the subject and description (readers stop
# the description at the first of them).
VERIFY_NOTE = "Verify (run by the host when you call complete_task): "
ASSIGNED_NOTE = "Assigned to you ("
PLAN_NOTE = (
    "This task requires a plan: submit a plan for it with submit_plan and wait for "
    "the lead's approval before changing anything (effectful tools stay closed until "
    "then; the approval is for this task only)."
)
OWNED_NOTE = (
    "You own this task now. Do it, then call complete_task with this task_id and "
    "claim_token and a short result."
)
INTERRUPTED_NOTE = "You were interrupted (your session stopped) while working on this task"
TASK_NOTES = (VERIFY_NOTE, ASSIGNED_NOTE, PLAN_NOTE, OWNED_NOTE, INTERRUPTED_NOTE)
PLAN_ANNOUNCEMENT = "plan for approval"


def neutralize(text: str) -> str:
    """Escape tag openings that would let content forge or close a host tag."""
    return _TAG_RE.sub(lambda m: f"&lt;{m.group(1)}{m.group(2)}", text)


def _attr(value: object) -> str:
    return html.escape(str(value), quote=True)


def labelled(sender: str, msg_type: str, content: str) -> str:
    """`<message from="lead" type="message">content</message>` for text that is no MailMessage
    (a spawn prompt)."""
    attrs = f'from="{_attr(sender)}" type="{_attr(msg_type)}"'
    return f"<message {attrs}>{neutralize(content)}</message>"


def format_message(msg: MailMessage) -> str:
    """One message as `<message from="bob" type="message">content</message>`."""
    attrs = f'from="{_attr(msg.sender)}" type="{_attr(msg.type)}"'
    if msg.request_id:
        attrs += f' request_id="{_attr(msg.request_id)}"'
    if msg.approve is not None:
        attrs += f' approve="{str(msg.approve).lower()}"'
    body = msg.content
    if msg.plan and msg.plan not in body:
        body = f"{body}\n{msg.plan}" if body else msg.plan
    return f"<message {attrs}>{neutralize(body)}</message>"


def inbox_block(messages: list[MailMessage]) -> str:
    """The lead's `<inbox>` block: one labelled entry per message, oldest first."""
    lines = ["<inbox>"]
    lines.extend(format_message(m) for m in messages)
    lines.append("</inbox>")
    return "\n".join(lines)


def auto_claim_block(task: Task) -> str:
    """What a teammate sees when the host claimed a task for it."""
    parts = [f"Subject: {neutralize(task.subject)}"]
    if task.description:
        parts.append(f"Description: {neutralize(task.description)}")
    if task.verify is not None:
        v = task.verify
        check = f"`{v.command}`"
        if v.expected_stdout is not None:
            check += f" must print {v.expected_stdout.strip()!r}"
        if v.expected_stdout_file:
            check += f" must print the content of {v.expected_stdout_file}"
        if v.expected_exit_code is not None:
            check += f" and exit {v.expected_exit_code}"
        parts.append(f"{VERIFY_NOTE}{neutralize(check)}")
    if task.assignee is not None:
        parts.append(f"{ASSIGNED_NOTE}{neutralize(task.assignee)}) by the lead.")
    if task.require_plan:
        parts.append(PLAN_NOTE)
    parts.append(OWNED_NOTE)
    body = "\n".join(parts)
    return (
        f'<auto-claimed-task id="{task.id}" claim_token="{_attr(task.claim_token or "")}">\n'
        f"{body}\n</auto-claimed-task>"
    )


def resumed_task_block(task: Task) -> str:
    """What a restarted teammate sees when it still holds a task with a live lease."""
    body = [f"Subject: {neutralize(task.subject)}"]
    if task.description:
        body.append(f"Description: {neutralize(task.description)}")
    body.append(
        f"{INTERRUPTED_NOTE}, and you still own it: your claim is valid until "
        f"{task.lease_expires_at} and is renewed while you run. Check what is already done "
        "(files, earlier results), finish the rest, then call complete_task with this task_id "
        "and claim_token and a short result."
    )
    text = "\n".join(body)
    token = _attr(task.claim_token or "")
    return f'<resumed-task id="{task.id}" claim_token="{token}">\n{text}\n</resumed-task>'


def plan_review_block(request_id: str, approved: bool, feedback: str) -> str:
    """The lead's answer to a submitted plan, as the teammate sees it."""
    verdict = "approved" if approved else "rejected"
    text = f"Your plan was {verdict} by the lead."
    if feedback:
        text += f" Feedback: {neutralize(feedback)}"
    if approved:
        text += " Effectful tools are open again (the human may still be asked)."
    else:
        text += " Effectful tools stay blocked: revise the plan and submit_plan again."
    return f'<plan-review request_id="{_attr(request_id)}" status="{verdict}">{text}</plan-review>'


def plan_announcement(request_id: str, task_id: int | None, summary: str) -> str:
    """The one-line text of a plan_approval_request message (the plan itself follows it)."""
    for_task = f" for task #{task_id}" if task_id is not None else ""
    return f"{PLAN_ANNOUNCEMENT} (request_id {request_id}){for_task}: {summary}"


# -- reading the blocks back -------------------------------------------------------------

_ATTR_RE = re.compile(r'([\w-]+)="([^"]*)"')
_MESSAGE_RE = re.compile(r"<message\b([^>]*)>(.*?)</message>", re.DOTALL)
_INBOX_RE = re.compile(r"<inbox\b[^>]*>(.*?)</inbox>", re.DOTALL)
_IDENTITY_RE = re.compile(r"<identity\b.*?</identity>", re.DOTALL)
_TASK_RE = re.compile(r"<(auto-claimed-task|resumed-task)\b([^>]*)>(.*?)</\1>", re.DOTALL)


@dataclass(frozen=True)
class FramedMessage:
    """One labelled message read back from a `<message>` block."""

    sender: str
    type: str
    content: str
    request_id: str | None = None

    def plan_lines(self) -> list[str]:
        """The non-empty lines of the content, without the host's one-line announcement
        when a plan follows it."""
        lines = [ln.strip() for ln in self.content.splitlines() if ln.strip()]
        if len(lines) > 1 and lines[0].lower().startswith(PLAN_ANNOUNCEMENT):
            return lines[1:]
        return lines


@dataclass(frozen=True)
class FramedTask:
    """A task block read back: `block` is its text exactly as written."""

    id: int
    claim_token: str
    subject: str
    description: str
    resumed: bool
    block: str

    @property
    def requires_plan(self) -> bool:
        """Whether the host told the teammate to submit a plan for this task first."""
        return PLAN_NOTE in self.block


def _attrs(raw: str) -> dict[str, str]:
    return {k: html.unescape(v) for k, v in _ATTR_RE.findall(raw)}


def _message(match: re.Match[str]) -> FramedMessage:
    attrs = _attrs(match.group(1))
    return FramedMessage(
        attrs.get("from", "?"),
        attrs.get("type", "message"),
        match.group(2).strip(),
        attrs.get("request_id") or None,
    )


def split_framed(text: str) -> tuple[list[FramedMessage], str]:
    """The labelled messages in a framed turn (the inbox's first, then loose ones) and the
    rest: what the user typed, with the identity, inbox and message blocks taken out."""
    rest = _IDENTITY_RE.sub("", text)
    messages = [_message(m) for box in _INBOX_RE.finditer(rest)
                for m in _MESSAGE_RE.finditer(box.group(1))]
    rest = _INBOX_RE.sub("", rest)
    messages.extend(_message(m) for m in _MESSAGE_RE.finditer(rest))
    return messages, _MESSAGE_RE.sub("", rest).strip()


def framed_tasks(text: str) -> list[FramedTask]:
    """Every auto-claimed or resumed task block in `text` with a numeric id, in order."""
    tasks = []
    for m in _TASK_RE.finditer(text):
        attrs = _attrs(m.group(2))
        if not attrs.get("id", "").isdigit():
            continue
        subject, description = _task_fields(m.group(3).strip())
        tasks.append(FramedTask(int(attrs["id"]), attrs.get("claim_token", ""), subject,
                                description, m.group(1) == "resumed-task", m.group(0)))
    return tasks


def _task_fields(body: str) -> tuple[str, str]:
    """Subject and description of a task block's body (both may span lines); the host's
    notes after them are left out."""
    fields: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in body.split("\n"):
        if line.startswith(TASK_NOTES):
            break
        for name in ("Subject", "Description"):
            if line.startswith(f"{name}: ") and name not in fields:
                current = fields[name] = [line[len(name) + 2:]]
                break
        else:
            if current is not None:
                current.append(line)
    subject, description = ("\n".join(fields.get(n, [])).strip()
                            for n in ("Subject", "Description"))
    return subject, description
