"""`/model` with no argument: the models the endpoint offers (the Models API's list), the
lead's current one marked, with each one's context window when the endpoint says it. An
offline model (demo, script) or a failing list gets one line, then the current model.

Names come from a server: shown as plain text with control characters made visible."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from ..errors import ModelError
from ..pricing import canonical_name
from .toolbar import window_text

CURRENT = "●"


def visible(text: str) -> str:
    """`text` with every control character spelled out (\\x1b, \\n, ...)."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def show_models(console: Console, model: Any) -> None:
    """Print the endpoint's models (current marked), or why there is no list."""
    current = str(getattr(model, "name", "?"))
    lister = getattr(model, "list_models", None)
    if not callable(lister):
        console.print(Text(f"{visible(current)} is offline: no models endpoint to list. "
                           f"lead model: {visible(current)}"))
        return
    try:
        listing = lister()
    except ModelError as exc:
        console.print(Text(f"cannot list the endpoint's models ({visible(str(exc))}). "
                           f"lead model: {visible(current)}", style="yellow"))
        return
    if not listing:
        console.print(Text(f"the endpoint lists no models. lead model: {visible(current)}"))
        return
    marked = False
    for info in listing:
        mine = _same(info.id, current)
        marked = marked or mine
        line = Text(f"{CURRENT if mine else ' '} {visible(info.id)}", style="bold" if mine else "")
        if info.display_name and info.display_name != info.id:
            line.append(f"  {visible(info.display_name)}", style="dim")
        if info.context_window:
            line.append(f"  {window_text(info.context_window)} context", style="dim")
        console.print(line)
    tail = "" if marked else " (not in the endpoint's list)"
    console.print(Text(f"lead model: {visible(current)}{tail} · /model NAME switches"))


def _same(listed: str, current: str) -> bool:
    """A listed id is the current model, also as its dated snapshot of an alias."""
    return listed == current or canonical_name(listed, {current}) == current
