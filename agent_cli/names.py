"""Names of teammates and inboxes: lowercase slugs, checked before they touch a path."""

from __future__ import annotations

import re

from .errors import InvalidName

NAME_RE = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
LEAD = "lead"
# Names a message could be mistaken as coming from: never a teammate's or an inbox's.
RESERVED = frozenset({"user", "human", "system", "assistant", "host", "anthropic", "claude"})


def check_name(name: object, what: str = "name") -> str:
    """Return `name` if it is a valid slug, else raise InvalidName with a one-line reason."""
    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
        shown = repr(name)
        if len(shown) > 40:
            shown = shown[:37] + "..."
        raise InvalidName(
            f"invalid {what} {shown}: use a lowercase slug "
            "(a letter, then up to 31 of a-z 0-9 _ -)"
        )
    if name in RESERVED:
        raise InvalidName(f"{what} {name!r} is reserved: it could pass for someone it is not")
    return name
