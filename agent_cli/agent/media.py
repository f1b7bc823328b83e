"""Images and PDFs in a conversation: what they cost in an estimate, how old ones are elided,
and the text that stands for them where a model or server does not take them.

A model without vision gets every image and document replaced by a placeholder in the
request it is sent (the conversation keeps them: a transcript and a resume still have them).
"""

from __future__ import annotations

from collections.abc import Sequence

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

# An image sent at most 1568 px on its long edge costs about width*height/750 tokens, at most
# ~1600; a PDF page about 1500-3000 (its text plus a picture of the page).
IMAGE_TOKENS = 1600
PDF_PAGE_TOKENS = 2500
ELIDED_WHY = "elided; it was seen"
NO_VISION_WHY = "not shown: this model does not accept images or PDFs"
# words of a 400 that mean "this model or server takes no images / documents"
_REFUSAL_WORDS = ("image", "vision", "document", "pdf", "multimodal")


def media_tokens(block: ImageBlock | DocumentBlock) -> int:
    if isinstance(block, ImageBlock):
        return IMAGE_TOKENS
    return PDF_PAGE_TOKENS * max(block.pages, 1)


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


def replace_media(content: list[Block], why: str) -> tuple[list[Block], int]:
    """`content` with every image and document (also inside tool results) replaced by a
    text placeholder, and the estimated tokens that removed; the same list when none."""
    out: list[Block] = []
    saved = 0
    for b in content:
        if isinstance(b, MEDIA_TYPES):
            saved += media_tokens(b)
            b = TextBlock(text=media_placeholder(b, why))
        elif isinstance(b, ToolResultBlock) and b.media():
            saved += sum(media_tokens(p) for p in b.media())
            parts = [TextBlock(text=media_placeholder(p, why)) if isinstance(p, MEDIA_TYPES)
                     else p for p in b.content]
            b = b.model_copy(update={"content": parts})
        out.append(b)
    return (out, saved) if saved else (content, 0)


def without_media(messages: Sequence[Message], why: str = NO_VISION_WHY) -> list[Message]:
    """The messages as a model without vision is sent them: placeholders for the media."""
    out = []
    for msg in messages:
        content, saved = replace_media(list(msg.content), why)
        out.append(Message(role=msg.role, content=content) if saved else msg)
    return out
