"""A line that must fit: shortened at a word boundary and ended with "…", never cut
mid-word without saying so (a reason that looks whole but is not misleads its reader)."""

from __future__ import annotations

ELLIPSIS = "…"


def shorten(text: str, limit: int) -> str:
    """`text` unchanged when it fits in `limit` characters; else its longest head that ends
    at a word boundary (a word cut only when the first word alone is too long) plus "…"."""
    if len(text) <= limit:
        return text
    room = max(0, limit - len(ELLIPSIS))
    head = text[:room]
    if room < len(text) and not text[room].isspace():
        cut = head.rfind(" ")
        if cut > 0:
            head = head[:cut]
    return head.rstrip(" ,;:") + ELLIPSIS
