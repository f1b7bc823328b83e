"""DemoModel: the offline demo, a ScriptedModel whose responder derives every reply.

No network and no key. It is deterministic and acts only through real tool calls, so the
tasks, teammates, claims, approvals, messages and protocols the user sees are the real
runtime at work. It keeps no state: each reply is derived from the request alone (who asks,
the conversation so far, the tools offered), so restarts and compaction do not confuse it.
The lead's side lives in lead.py, the teammates' in teammate.py, the prompts it understands
in intents.py.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

from ...names import LEAD
from ..base import ModelEvent, ModelRequest
from ..reply import Pacing, Reply
from ..scripted import ScriptedModel
from .conversation import pairs_since
from .lead import lead_reply, new_tool_id
from .teammate import current_task, teammate_reply

NOTHING_TO_ADD = "(demo model) Nothing to add."


class DemoModel:
    """The offline demo model. `pace_s` spaces the streamed pieces so the demo reads like a
    live agent (and the teammates really interleave); 0 streams at once."""

    name = "demo"

    def __init__(self, pace_s: float = 0.02) -> None:
        self.pace_s = pace_s
        self._scripted = ScriptedModel(
            name=self.name,
            responder=self.reply,
            pacing=Pacing(pace_s, typed=True),
            tool_ids=new_tool_id,
            record=False,
        )

    def reply(self, request: ModelRequest) -> Reply:
        """Decide the next reply (pure: the same request gives the same reply)."""
        if not request.tools:
            reply = Reply(summary_for_compaction(request))
        elif request.agent == LEAD:
            reply = lead_reply(request)
        else:
            reply = teammate_reply(request)
        return reply if reply.text or reply.tool_calls else Reply(NOTHING_TO_ADD)

    def stream(
        self, request: ModelRequest, cancel: threading.Event | None = None
    ) -> Iterator[ModelEvent]:
        return self._scripted.stream(request, cancel)


def summary_for_compaction(request: ModelRequest) -> str:
    """A summary when asked to compact: keeps the newest task block verbatim so the teammate
    still knows its task (and token) afterwards."""
    messages = request.messages
    calls = sum(len(m.tool_uses()) for m in messages)
    lines = [f"(demo model) Summary of {len(messages)} earlier messages ({calls} tool calls)."]
    task = current_task(messages)
    if task is not None and not any(
        p.use.name == "complete_task" and p.ok for p in pairs_since(messages, task.index)
    ):
        lines.append(task.block)
    return "\n".join(lines)
