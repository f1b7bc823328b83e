"""Images and PDFs named in a prompt, attached to it as blocks the model sees.

A path is found as a terminal gives it when a file is typed, pasted or dragged in: plain,
in single or double quotes, with backslash-escaped spaces, or as a file:// URL; trailing
punctuation is tried off. Only a regular file whose content is an image or a PDF (magic
bytes: tools/media.py) is attached; any other word is left alone, and the prompt text is sent
as typed. Reading follows the read rules the agents have: inside the workdir through
tools.confined (no symlink followed on the way, a FIFO or device named, never opened); a path
outside the workdir -- the user named it, like a screenshot on the desktop -- with its last
component never a link. Neither is read where a `Read(...)` deny rule,
`sandbox.filesystem.denyRead` entry or credential store covers it (the paths the sandbox
hides: sandbox/boundary.py).
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from ..errors import ToolError
from ..events import Notice
from ..models.base import DocumentBlock, ImageBlock
from ..tools.confined import not_regular, read_capped
from ..tools.fileio import READ_CAP, read_bytes
from ..tools.media import load_media

MAX_ATTACHMENTS = 20  # more images in one request lower the API's pixel cap to 2000
_TOKEN = re.compile(r"'([^'\n]+)'|\"([^\"\n]+)\"|((?:\\.|[^\s'\"\\])+)")
_TRAILING = ".,;:!?)]}"


@dataclass
class Attachments:
    """What a prompt attaches: the blocks, one feed line per file, and what was refused."""

    blocks: list[ImageBlock | DocumentBlock] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def candidates(text: str) -> list[str]:
    """The words of a prompt that could name a file, unquoted and unescaped, in order."""
    out: list[str] = []
    for m in _TOKEN.finditer(text):
        quoted = m.group(1) or m.group(2)
        word = quoted if quoted is not None else re.sub(r"\\(.)", r"\1", m.group(3))
        if word.startswith("file://"):
            word = unquote(word[len("file://"):])
        if "/" in word or "." in word.lstrip("."):
            out.append(word)
    return out


def for_prompt(runtime: Any, text: str) -> Attachments:
    """attach() with the session's read rules; each line and problem goes to the feed."""
    known: list[list[Path]] = []

    def hidden() -> list[Path]:  # worked out once, and only when a file is named
        if not known:
            from ..sandbox.boundary import build_boundary

            sandbox = runtime.sandbox
            known.append(build_boundary(runtime.workdir, sandbox.settings, runtime.workdir,
                                        list(sandbox.deny_read_rules())).hidden)
        return known[0]

    found = attach(text, runtime.workdir, hidden)
    for line in found.lines:
        runtime.events.emit(Notice("lead", line))
    for line in found.problems:
        runtime.events.emit(Notice("lead", line, "warning"))
    return found


def attach(text: str, workdir: Path,
           hidden: Callable[[], Sequence[Path]] = list) -> Attachments:
    """The images and PDFs `text` names (each file once, at most MAX_ATTACHMENTS)."""
    found = Attachments()
    seen: set[str] = set()
    for word in candidates(text):
        for name, path in _spellings(word, workdir):
            key = os.path.abspath(path)
            if key in seen or not os.path.lexists(path) or os.path.isdir(path):
                continue
            seen.add(key)
            if len(found.blocks) >= MAX_ATTACHMENTS:
                found.problems.append(f"not attached: {name}: at most {MAX_ATTACHMENTS} files "
                                      "go with one prompt")
                break
            _add(found, name, Path(path), workdir, hidden)
            break
    return found


def _spellings(word: str, workdir: Path) -> list[tuple[str, str]]:
    """(the word, its path) -- relative to the workdir, ~ expanded -- then the same without
    trailing punctuation ("look at shot.png.")."""
    out: list[tuple[str, str]] = []
    for w in dict.fromkeys((word, word.rstrip(_TRAILING))):
        if w:
            expanded = os.path.expanduser(w)
            out.append((w, expanded if os.path.isabs(expanded) else str(workdir / expanded)))
    return out


def _add(found: Attachments, word: str, path: Path, workdir: Path,
         hidden: Callable[[], Sequence[Path]]) -> None:
    try:
        data, shown = _read(path, workdir, hidden)
        media = load_media(data, shown)
    except ToolError as exc:
        found.problems.append(f"not attached: {word}: {exc}")
        return
    if media is None:
        return  # not an image or a PDF: the word stays text
    found.blocks.append(media.block)
    if media.size is not None:
        found.lines.append(f"attached: {shown} ({media.size[0]}x{media.size[1]})")
    else:
        found.lines.append(f"attached: {media.block.label}")


def _read(path: Path, workdir: Path,
          hidden: Callable[[], Sequence[Path]]) -> tuple[bytes, str]:
    root = Path(os.path.realpath(workdir))
    parent = Path(os.path.realpath(path.parent))
    real = parent / path.name
    target = Path(os.path.realpath(real))  # a link inside the workdir is read through
    for h in hidden():
        for form in {Path(h), Path(os.path.realpath(h))}:
            if any(p == form or form in p.parents for p in (real, target)):
                raise ToolError(f"{real} is covered by a Read deny rule, denyRead or a "
                                "credential store")
    if parent == root or root in parent.parents:
        return read_bytes(root, str(parent.relative_to(root) / path.name))
    return _read_outside(real), str(real)


def _read_outside(real: Path) -> bytes:
    """A file outside the workdir: its last component must not be a link, and it must be a
    regular file (a FIFO is never opened for a blocking read)."""
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        why = "it is a symbolic link" if exc.errno == errno.ELOOP else exc.strerror
        raise ToolError(f"cannot read {real}: {why}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise not_regular(str(real), mode)
        return read_capped(fd, READ_CAP, str(real))
    finally:
        os.close(fd)
