"""Text that did not come from agent-cli, made safe for a terminal or a diagram file.

A model's text, a tool's input, a task's subject, a message, a file name, a hook's or an MCP
server's output may carry escape sequences (`\\x1b[2K` erases a line, `\\x1b]0;` sets the
title), C1 controls, bidi overrides that reorder what is shown, invisible format characters or
lone surrogates. `visible` shows each such character as an escape (`\\x1b`, `\\u202e`,
`\\ud800`) instead of letting a terminal interpret it; `json_visible` does the same inside a
JSON document with JSON's own escapes, so a parser still reads back the exact text. A base
module: board/ (the Mermaid/DOT graph), commands/ and ui/ all use it.
"""

from __future__ import annotations

import json
import re
from typing import Any

# Every character a terminal may interpret or that shows as nothing / reorders its
# neighbours: Unicode categories Cc (C0 but tab and newline, DEL, C1), Cf (bidi
# embeddings, overrides and isolates, marks, zero-width space, BOM, tag characters, ...;
# zero-width (non-)joiners are kept: scripts and emoji need them), Cs (lone surrogates),
# Zl and Zp (line and paragraph separators).
_RANGES = (
    (0x00, 0x08), (0x0B, 0x1F), (0x7F, 0x9F), (0xAD, 0xAD), (0x600, 0x605), (0x61C, 0x61C),
    (0x6DD, 0x6DD), (0x70F, 0x70F), (0x890, 0x891), (0x8E2, 0x8E2), (0x180E, 0x180E),
    (0x200B, 0x200B), (0x200E, 0x200F), (0x2028, 0x202E), (0x2060, 0x2064), (0x2066, 0x206F),
    (0xD800, 0xDFFF), (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB), (0x110BD, 0x110BD),
    (0x110CD, 0x110CD), (0x13430, 0x1343F), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A),
    (0xE0001, 0xE0001), (0xE0020, 0xE007F),
)
UNSAFE = re.compile("[" + "".join(
    re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}"
    for a, b in _RANGES) + "]")
_LINE_BREAKS = re.compile("[\n\t]")


def escape_char(char: str) -> str:
    """`\\x1b` for a code point up to 0xff, `\\u202e` up to 0xffff, else `\\U000e0041`."""
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def visible(text: Any, one_line: bool = False) -> str:
    """`text` with every unsafe character shown as an escape; `\\r\\n` becomes `\\n`.
    `one_line` escapes newlines and tabs too (a table cell, a label, a summary)."""
    text = text if isinstance(text, str) else str(text)
    if "\r\n" in text:
        text = text.replace("\r\n", "\n")
    if text.isascii() and text.isprintable():  # the common case: nothing to do
        return text
    if UNSAFE.search(text) is not None:
        text = UNSAFE.sub(_escaped, text)
    if one_line and ("\n" in text or "\t" in text):
        text = _LINE_BREAKS.sub(_escaped, text)
    return text


def _escaped(match: re.Match[str]) -> str:
    return escape_char(match.group())


def is_safe(text: str) -> bool:
    """True when `visible(text)` would change nothing."""
    return UNSAFE.search(text.replace("\r\n", "\n")) is None


def unsafe_count(text: str) -> int:
    """How many characters `visible` escapes in `text` (the approval panel says so)."""
    return len(UNSAFE.findall(text.replace("\r\n", "\n")))


def _json_escape(char: str) -> str:
    code = ord(char)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000  # a JSON string spells an astral character as a surrogate pair
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def json_visible(document: str) -> str:
    """A JSON document (as `json.dumps` wrote it) with every unsafe character inside its
    strings spelled as a JSON escape: the terminal sees none, a parser reads the same text.
    Lone surrogates included, so the result always encodes as UTF-8."""
    return UNSAFE.sub(lambda m: _json_escape(m.group()), document)


def dumps(data: Any, **kwargs: Any) -> str:
    """`json.dumps(data, ensure_ascii=False, **kwargs)` made safe by `json_visible`."""
    return json_visible(json.dumps(data, ensure_ascii=False, **kwargs))


class SafeStream:
    """A text stream that shows every write through `visible` (the command-line verbs'
    stdout and stderr: nothing they print is agent-cli's own escape sequence). A character
    the stream cannot encode is written as a backslash escape instead of raising."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        shown = visible(text)
        try:
            self._stream.write(shown)
        except UnicodeEncodeError:
            encoding = getattr(self._stream, "encoding", None) or "utf-8"
            self._stream.write(shown.encode(encoding, "backslashreplace").decode(encoding))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
