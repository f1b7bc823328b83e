"""DemoModel: the offline demo, behind the same Model interface as Claude.

No network and no key. It is deterministic and acts only through real tool calls, so the
tasks, teammates, claims, approvals, messages and protocols the user sees are the real
runtime at work. It keeps no state: each reply is derived from the request alone (who asks,
the conversation so far, the tools offered), so restarts and compaction do not confuse it.
The lead's side lives in demo_lead.py, the teammates' in demo_teammate.py, the prompts it
understands in demo_intents.py.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

from ..errors import Interrupted
from ..names import LEAD
from .base import (
    Message,
    ModelEvent,
    ModelRequest,
    ResponseDone,
    TextBlock,
    TextDelta,
    ToolCall,
    ToolUseBlock,
    Usage,
)
from .demo_convo import Reply, find_blocks, message_text, pairs_since
from .demo_lead import lead_reply, new_tool_id
from .demo_teammate import current_task, teammate_reply


class DemoModel:
    """The offline demo model. `pace_s` spaces the streamed chunks so the demo reads like a
    live agent (and the teammates really interleave); 0 streams at once."""

    name = "demo"

    def __init__(self, pace_s: float = 0.02) -> None:
        self.pace_s = pace_s

    def reply(self, request: ModelRequest) -> Reply:
        """Decide the next reply (pure: the same request gives the same reply)."""
        if not request.tools:
            return Reply(summary_for_compaction(request))
        if request.agent == LEAD:
            return lead_reply(request)
        return teammate_reply(request)

    def stream(
        self, request: ModelRequest, cancel: threading.Event | None = None
    ) -> Iterator[ModelEvent]:
        cancel = cancel or threading.Event()
        reply = self.reply(request)
        blocks: list[TextBlock | ToolUseBlock] = []
        if reply.text:
            yield from self._stream_text(reply.text, cancel)
            blocks.append(TextBlock(text=reply.text))
        for name, args in reply.calls:
            self._pause(cancel)
            use = ToolUseBlock(id=new_tool_id(reply.phase), name=name, input=args)
            blocks.append(use)
            yield ToolCall(use)
        if not blocks:
            blocks.append(TextBlock(text="(demo model) Nothing to add."))
        usage = Usage(
            input_tokens=_estimate_tokens(request),
            output_tokens=max(1, sum(len(b.model_dump_json()) for b in blocks) // 4),
        )
        yield ResponseDone(
            message=Message(role="assistant", content=blocks),
            stop_reason="tool_use" if reply.calls else "end_turn",
            usage=usage,
        )

    def _stream_text(self, text: str, cancel: threading.Event) -> Iterator[ModelEvent]:
        words = text.split(" ")
        chunk = max(1, len(words) // 4)
        for i in range(0, len(words), chunk):
            self._pause(cancel)
            piece = " ".join(words[i : i + chunk])
            yield TextDelta(piece if i + chunk >= len(words) else piece + " ")

    def _pause(self, cancel: threading.Event) -> None:
        if self.pace_s > 0:
            cancel.wait(self.pace_s)
        if cancel.is_set():
            raise Interrupted("interrupted by the user")


def summary_for_compaction(request: ModelRequest) -> str:
    """A summary when asked to compact: keeps the newest claimed-task block verbatim so the
    teammate still knows its task (and token) afterwards."""
    messages = request.messages
    calls = sum(len(m.tool_uses()) for m in messages)
    lines = [f"(demo model) Summary of {len(messages)} earlier messages ({calls} tool calls)."]
    task = current_task(messages)
    if task is not None and not any(
        p.use.name == "complete_task" and p.ok for p in pairs_since(messages, task.index)
    ):
        last = find_blocks(message_text(messages[task.index]), "auto-claimed-task")[-1]
        attrs = " ".join(f'{k}="{v}"' for k, v in last.attrs.items())
        lines.append(f"<auto-claimed-task {attrs}>\n{last.body}\n</auto-claimed-task>")
    return "\n".join(lines)


def _estimate_tokens(request: ModelRequest) -> int:
    size = len(request.system) + sum(len(m.model_dump_json()) for m in request.messages)
    return max(1, size // 4)
