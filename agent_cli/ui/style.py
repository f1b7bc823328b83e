"""Colours and rich-to-string rendering shared by every UI module.

Each agent gets a stable colour derived from its name (the same in rich output and in the
prompt_toolkit toolbar). `render_str` turns any rich renderable into a string (ANSI when
colour is on) so that a whole block can be written to the terminal in one piece. Every
console is a `SafeConsole`: no markup is read from strings, and the text of every segment
(never rich's own styles and controls) goes through `safetext.visible` on its way out.
"""

from __future__ import annotations

import io
import zlib
from typing import Any

from rich.console import Console
from rich.segment import Segment
from rich.text import Text

from ..safetext import UNSAFE, escape_char, visible

LEAD_STYLE = ("bold bright_white", "bold")
# (rich style, prompt_toolkit style) pairs; an agent's colour is picked by a hash of its name.
PALETTE: tuple[tuple[str, str], ...] = (
    ("cyan", "fg:ansicyan"),
    ("magenta", "fg:ansimagenta"),
    ("green", "fg:ansigreen"),
    ("yellow", "fg:ansiyellow"),
    ("blue", "fg:ansiblue"),
    ("bright_red", "fg:ansibrightred"),
    ("bright_cyan", "fg:ansibrightcyan"),
    ("bright_magenta", "fg:ansibrightmagenta"),
)


def _pair(name: str) -> tuple[str, str]:
    if name == "lead":
        return LEAD_STYLE
    return PALETTE[zlib.crc32(name.encode("utf-8")) % len(PALETTE)]


def agent_style(name: str) -> str:
    """The rich style of an agent's name."""
    style = _pair(name)[0]
    return style if style.startswith("bold") else "bold " + style


def agent_ptk_style(name: str) -> str:
    """The prompt_toolkit style of an agent's name (toolbar)."""
    return _pair(name)[1]


class SafeConsole(Console):
    """A rich Console whose output never carries a control character it was given as text:
    the last guard for a string a renderer forgot to pass through `visible` first."""

    def _render_buffer(self, buffer: Any) -> str:
        # rich's one place where segments become output (Console.print, Live, capture)
        return super()._render_buffer(
            seg if seg.control or UNSAFE.search(seg.text) is None
            else Segment(visible(seg.text), seg.style, seg.control)
            for seg in buffer
        )


def safe_console(**kwargs: Any) -> SafeConsole:
    """A SafeConsole that reads no markup from strings (`[red]` in a subject is text)."""
    return SafeConsole(markup=False, highlight=False, emoji=False, **kwargs)


def marked(text: str, style: str = "bold reverse red") -> Text:
    """`text` as rich Text with each unsafe character shown as its escape, in `style`."""
    text = text.replace("\r\n", "\n")
    out = Text()
    last = 0
    for match in UNSAFE.finditer(text):
        out.append(text[last:match.start()])
        out.append(escape_char(match.group()), style=style)
        last = match.end()
    out.append(text[last:])
    return out


def make_console(file: Any, width: int, color: bool) -> Console:
    """A rich Console writing to `file` with a fixed width; plain text when color is off."""
    return safe_console(
        file=file,
        width=width,
        force_terminal=color,
        color_system="truecolor" if color else None,
        no_color=not color,
        soft_wrap=False,
    )


def render_str(renderable: Any, width: int = 100, color: bool = False) -> str:
    """Render a rich renderable (or markup-free str) to one string ending in a newline."""
    buf = io.StringIO()
    make_console(buf, width, color).print(renderable)
    return buf.getvalue()


def shorten(text: str, limit: int = 60) -> str:
    """First line of `text` shown safely (`visible`), cut to `limit` characters with an
    ellipsis."""
    text = (text or "").strip()
    line = visible(text.split("\n", 1)[0], one_line=True) if text else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"
