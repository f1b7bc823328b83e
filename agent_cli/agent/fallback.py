"""What a model or server refuses with a 400: extended thinking, images and PDFs. Each is
turned off for the agent once, said in one warning line, and the request is sent again --
never a loop of the same refused request."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..errors import BadRequest
from ..events import Event, Notice
from ..models.base import Message
from . import media
from .turn import AgentSettings


def feature_refused(exc: BadRequest, settings: AgentSettings, messages: Sequence[Message],
                    model: str, agent: str, emit: Callable[[Event], None]) -> bool:
    """True when `exc` refused a feature this agent had on (now off: send again)."""
    text = str(exc)
    if settings.thinking is not None and "thinking" in text.lower():
        settings.thinking = None
        emit(Notice(agent, f"{model} does not accept extended thinking; thinking is off "
                           f"for {agent} ({exc})", "warning"))
        return True
    if settings.vision and media.refuses_media(text) and media.has_media(messages):
        settings.vision = False  # agent._request sends placeholders from now on
        emit(Notice(agent, f"{model} refused an image or PDF ({exc}); {agent} gets text "
                           "placeholders for them from now on", "warning"))
        return True
    return False
