"""Images and PDFs in a conversation: what they cost in an estimate, how old ones are elided,
and the text that stands for them where a model or server does not take them.

A model without vision gets every image and document replaced by a placeholder in the
request it is sent, and any request carries only the newest ones that fit the API's request
size (the conversation keeps them all: a transcript and a resume still have them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..models.base import (
    MEDIA_TYPES,
    Block,
    DocumentBlock,
    ImageBlock,
    Message,
    TextBlock,
    ToolResultBlock,
    media_placeholder,
)

ELIDED_WHY = "elided; it was seen"
NO_VISION_WHY = "not shown: this model does not accept images or PDFs"
OVER_BUDGET_WHY = "left out: newer images and PDFs fill the request"
# what one request may carry of images and PDFs (base64): the API's cap is 32 MB in all
REQUEST_MEDIA_BYTES = 24 * 1024 * 1024
REQUEST_IMAGES_MAX = 100
# words of a 400 that mean "this model or server takes no images / documents"
_REFUSAL_WORDS = ("image", "vision", "document", "pdf", "multimodal")


def media_tokens(block: ImageBlock | DocumentBlock) -> int:
    return block.tokens()


def has_media(messages: Sequence[Message]) -> bool:
    for msg in messages:
        for b in msg.content:
            if isinstance(b, MEDIA_TYPES) or (isinstance(b, ToolResultBlock) and b.media()):
                return True
    return False


def refuses_media(message: str) -> bool:
    """Whether a 400's message is about images or documents (a model without vision)."""
    low = message.lower()
    return any(w in low for w in _REFUSAL_WORDS)


def replace_media(content: list[Block], why: str,
                  keep: Callable[[ImageBlock | DocumentBlock], bool] = lambda b: False,
                  ) -> tuple[list[Block], int]:
    """`content` with every image and document (also inside tool results) that `keep`
    does not keep replaced by a text placeholder, and the estimated tokens that removed."""
    out: list[Block] = []
    saved = 0

    def swap(p: Any) -> Any:
        nonlocal saved
        if not isinstance(p, MEDIA_TYPES) or keep(p):
            return p
        saved += media_tokens(p)
        return TextBlock(text=media_placeholder(p, why))

    for b in content:
        if isinstance(b, ToolResultBlock) and b.media():
            before = saved
            parts = [swap(p) for p in b.content]
            if saved != before:
                b = b.model_copy(update={"content": parts})
        else:
            b = swap(b)
        out.append(b)
    return (out, saved) if saved else (content, 0)


def for_request(messages: Sequence[Message], vision: bool = True) -> list[Message]:
    """The messages as one request carries them: no media at all for a model without
    vision; else the newest images and PDFs up to the request's budget (the API takes 32 MB
    in all and at most 100 images), older ones as placeholders."""
    if not vision:
        return without_media(messages)
    used = [0, 0]  # base64 bytes, images

    def keep(block: ImageBlock | DocumentBlock) -> bool:
        size = len(block.source.data)
        images = used[1] + isinstance(block, ImageBlock)
        if used[0] + size > REQUEST_MEDIA_BYTES or images > REQUEST_IMAGES_MAX:
            used[0] = REQUEST_MEDIA_BYTES + 1  # and everything older
            return False
        used[0], used[1] = used[0] + size, images
        return True

    out = list(messages)
    for i in range(len(out) - 1, -1, -1):
        content, saved = replace_media(out[i].content[::-1], OVER_BUDGET_WHY, keep)
        if saved:  # newest first, within a message too
            out[i] = Message(role=out[i].role, content=content[::-1])
    return out


def without_media(messages: Sequence[Message], why: str = NO_VISION_WHY) -> list[Message]:
    """The messages as a model without vision is sent them: placeholders for the media."""
    out = []
    for msg in messages:
        content, saved = replace_media(list(msg.content), why)
        out.append(Message(role=msg.role, content=content) if saved else msg)
    return out
