"""How host-injected content looks to a model: labelled messages, the lead's inbox block,
auto-claimed tasks and plan reviews.

Everything a teammate or the lead receives from another agent is wrapped in a tag that names
the sender, so a model never mistakes it for the user. Content cannot close or forge a tag:
`<message`, `</message`, `<inbox` and similar openings inside content are escaped.
"""

from __future__ import annotations

import html
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..board.models import Task
    from .mailbox import MailMessage

_TAG_RE = re.compile(
    r"<(/?)(message|inbox|auto-claimed-task|resumed-task|plan-review|identity|host-reminder)\b",
    re.IGNORECASE,
)


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
        parts.append(f"Verify (run by the host when you call complete_task): {neutralize(check)}")
    if task.assignee is not None:
        parts.append(f"Assigned to you ({neutralize(task.assignee)}) by the lead.")
    if task.require_plan:
        parts.append(
            "This task requires a plan: submit a plan for it with submit_plan and wait for "
            "the lead's approval before changing anything (effectful tools stay closed until "
            "then; the approval is for this task only)."
        )
    parts.append(
        "You own this task now. Do it, then call complete_task with this task_id and "
        "claim_token and a short result."
    )
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
        "You were interrupted (your session stopped) while working on this task, and you "
        f"still own it: your claim is valid until {task.lease_expires_at} and is renewed "
        "while you run. Check what is already done (files, earlier results), finish the rest, "
        "then call complete_task with this task_id and claim_token and a short result."
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
