"""The workspace tools: read_file, write_file, edit_file, glob, grep (+ shell from shell.py).

Every path is walked and opened through tools.confined (relative to directory fds, O_NOFOLLOW
on every component, so a symlink swap cannot send a read or write outside the workdir; a
FIFO or device is a clear error, never a blocked read). Writes are atomic (tools.fileio:
temp file + os.replace in the same directory fd) and keep the file's mode; line endings are
preserved. Results speak in workdir-relative paths. `workspace_tools()` returns all six.
"""

from __future__ import annotations

import difflib
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from ..errors import ToolError
from .base import Tool, ToolContext, ToolOutput
from .confined import read_capped
from .fileio import check_writable, current_text, decode_text, read_bytes, read_text, write_text
from .media import load_media
from .read_guard import Withheld
from .roots import place, writable
from .search import glob_paths, grep_files

if TYPE_CHECKING:
    from ..sandbox.manager import Sandbox

MAX_LINE_CHARS = 2000
GLOB_CAP = 500
GREP_CAP = 200
GREP_LINE_CHARS = 300
GREP_MAX_FILE_BYTES = 5_000_000
PREVIEW_LINES = 400


# ----- helpers ------------------------------------------------------------------------------
def _diff(old: str, new: str, shown: str) -> str:
    lines = list(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile=f"a/{shown}",
            tofile=f"b/{shown}",
        )
    )
    if not lines:
        return f"(no change to {shown})"
    extra = len(lines) - PREVIEW_LINES
    text = "".join(ln if ln.endswith("\n") else ln + "\n" for ln in lines[:PREVIEW_LINES])
    return text + (f"... ({extra} more diff lines)\n" if extra > 0 else "")


# ----- read_file ----------------------------------------------------------------------------
class ReadFileInput(BaseModel):
    model_config = ConfigDict(defer_build=True)

    path: str = Field(description="File path, relative to the workdir")
    offset: int = Field(0, ge=0, description="1-based line to start at (0 = from the top)")
    limit: int = Field(2000, ge=1, le=10_000, description="Maximum number of lines")


def read_file(args: ReadFileInput, ctx: ToolContext) -> str | ToolOutput:
    where = place(ctx.workspace, args.path)
    data, rel = read_bytes(where.root, where.raw, where.guard(ctx.read_guard))
    shown = where.name(rel)
    media = load_media(data, shown)  # an image or a PDF, by its content
    if media is not None:
        return ToolOutput(media.text, media=[media.block])
    text = decode_text(data, shown)
    lines = text.splitlines()
    if not lines:
        return f"({shown} is empty)"
    start = max(args.offset, 1)
    if start > len(lines):
        raise ToolError(f"offset {args.offset} is past the end of {shown} ({len(lines)} lines)")
    chunk = lines[start - 1 : start - 1 + args.limit]
    out = []
    for n, line in enumerate(chunk, start):
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + f"... [line cut at {MAX_LINE_CHARS} chars]"
        out.append(f"{n:6d}\t{line}")
    end = start + len(chunk) - 1
    if end < len(lines) or start > 1:
        more = f"; use offset={end + 1} to read more" if end < len(lines) else ""
        out.append(f"(lines {start}-{end} of {len(lines)}{more})")
    return "\n".join(out)


# ----- write_file ---------------------------------------------------------------------------
class WriteFileInput(BaseModel):
    model_config = ConfigDict(defer_build=True)

    path: str = Field(description="File path, relative to the workdir")
    content: str = Field(description="The complete new content of the file")


def write_file(args: WriteFileInput, ctx: ToolContext) -> str:
    where = place(ctx.workspace, args.path)
    writable(ctx.workspace, where)
    rel, existed = write_text(where.root, where.raw, args.content)
    n = len(args.content.splitlines())
    verb = "Overwrote" if existed else "Created"
    guard = where.guard(ctx.read_guard)
    if guard is not None and guard.withheld(rel):
        verb = "Wrote"  # whether a file the agent may not read existed is not said either
    return f"{verb} {where.name(rel)} ({n} lines, {len(args.content.encode('utf-8'))} bytes)"


def preview_write(args: WriteFileInput, ctx: ToolContext) -> str:
    where = place(ctx.workspace, args.path)
    check_writable(where.root, where.raw)
    old, rel = current_text(where.root, where.raw)
    return _diff(old, args.content, where.name(rel))


# ----- edit_file ----------------------------------------------------------------------------
class EditFileInput(BaseModel):
    model_config = ConfigDict(defer_build=True)

    path: str = Field(description="File path, relative to the workdir")
    old_string: str = Field(description="Exact text to replace (must be unique unless replace_all)")
    new_string: str = Field(description="Replacement text")
    replace_all: bool = Field(False, description="Replace every occurrence")


def _edited(args: EditFileInput, ctx: ToolContext) -> tuple[str, str, str, int]:
    if not args.old_string:
        raise ToolError("old_string is empty; use write_file to create or replace a whole file")
    if args.old_string == args.new_string:
        raise ToolError("old_string and new_string are the same; nothing to change")
    where = place(ctx.workspace, args.path)
    old, rel = read_text(where.root, where.raw, where.guard(ctx.read_guard))
    shown = where.name(rel)
    count = old.count(args.old_string)
    if count == 0:
        raise ToolError(
            f"old_string was not found in {shown}; read the file and copy the text exactly "
            "(including whitespace)"
        )
    if count > 1 and not args.replace_all:
        raise ToolError(
            f"old_string occurs {count} times in {shown}; add surrounding lines to make it "
            "unique, or set replace_all=true"
        )
    new = old.replace(args.old_string, args.new_string)
    return shown, old, new, count


def edit_file(args: EditFileInput, ctx: ToolContext) -> str:
    where = place(ctx.workspace, args.path)
    writable(ctx.workspace, where)
    shown, _old, new, count = _edited(args, ctx)
    write_text(where.root, where.raw, new)
    return f"Edited {shown}: replaced {count} occurrence{'s' if count > 1 else ''}"


def preview_edit(args: EditFileInput, ctx: ToolContext) -> str:
    shown, old, new, _count = _edited(args, ctx)
    return _diff(old, new, shown)


# ----- glob ---------------------------------------------------------------------------------
class GlobInput(BaseModel):
    model_config = ConfigDict(defer_build=True)

    pattern: str = Field(description="Glob pattern, e.g. '**/*.py' ('**' crosses directories)")
    path: str = Field(".", description="Directory to search from, relative to the workdir")


def _check_pattern(pattern: str) -> None:
    if not pattern or "\x00" in pattern:
        raise ToolError("pattern is empty or contains a NUL byte")
    if pattern.startswith(("/", "~")) or ".." in Path(pattern).parts:
        raise ToolError(f"pattern {pattern!r} must stay inside the search directory")


def glob_files(args: GlobInput, ctx: ToolContext) -> str:
    _check_pattern(args.pattern)
    withheld = Withheld()
    where = place(ctx.workspace, args.path)
    try:
        found = glob_paths(where.root, where.raw, args.pattern, ctx.cancel,
                           where.guard(ctx.read_guard), withheld)
    except OSError as exc:
        raise ToolError(f"glob {args.pattern!r} failed: {exc.strerror or exc}") from None
    note = withheld.note("entry")
    if not found:
        return "\n".join(x for x in (f"no files match {args.pattern}", note) if x)
    shown = [where.name(f) + ("/" if f.endswith("/") and where.extra else "")
             for f in found[:GLOB_CAP]]
    if len(found) > GLOB_CAP:
        shown.append(f"... {len(found) - GLOB_CAP} more (capped at {GLOB_CAP}); narrow the pattern")
    return "\n".join(shown + ([note] if note else []))


# ----- grep ---------------------------------------------------------------------------------
class GrepInput(BaseModel):
    model_config = ConfigDict(defer_build=True)

    pattern: str = Field(description="Python regular expression")
    path: str = Field(".", description="File or directory to search, relative to the workdir")
    glob: str | None = Field(None, description="Only files matching this glob, e.g. '*.py'")


def _grep_one(fd: int, regex: re.Pattern[str], rel: str, hits: list[str], cap: int
              ) -> str | None:
    """Add `rel`'s matching lines to `hits`; why it was not searched, or None."""
    try:
        if os.fstat(fd).st_size > GREP_MAX_FILE_BYTES:
            return "over the per-file size cap"
        data = read_capped(fd, GREP_MAX_FILE_BYTES, rel)
    except (OSError, ToolError):
        return "unreadable"
    finally:
        os.close(fd)
    if b"\x00" in data[:8192]:
        return None  # binary: not a text search's business
    for n, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        if regex.search(line):
            if len(line) > GREP_LINE_CHARS:
                line = line[:GREP_LINE_CHARS] + "..."
            hits.append(f"{rel}:{n}: {line}")
            if len(hits) > cap:
                return None
    return None


def _skipped_lines(skipped: dict[str, list[str]], limit: int = 20) -> list[str]:
    """One line per reason naming the files grep did not search (at most `limit` names)."""
    cap_mb = GREP_MAX_FILE_BYTES // 1_000_000
    lines = []
    for why, names in skipped.items():
        shown = ", ".join(names[:limit]) + (f" and {len(names) - limit} more"
                                            if len(names) > limit else "")
        what = f"over the {cap_mb} MB per-file cap" if why.startswith("over") else why
        lines.append(f"not searched ({what}): {shown}")
    return lines


def grep(args: GrepInput, ctx: ToolContext) -> str:
    try:
        regex = re.compile(args.pattern)
    except re.error as exc:
        raise ToolError(f"invalid regex {args.pattern!r}: {exc}") from None
    hits: list[str] = []
    skipped: dict[str, list[str]] = {}
    withheld = Withheld()
    where = place(ctx.workspace, args.path)
    files = grep_files(where.root, where.raw, args.glob, ctx.cancel,
                       where.guard(ctx.read_guard), withheld)
    try:
        for rel, fd in files:
            rel = where.name(rel)
            why = _grep_one(fd, regex, rel, hits, GREP_CAP)
            if why is not None:
                skipped.setdefault(why, []).append(rel)
            if len(hits) > GREP_CAP:
                break
    except OSError as exc:
        raise ToolError(f"grep failed: {exc.strerror or exc}") from None
    finally:
        files.close()
    note = withheld.note("file")
    if not hits:
        return "\n".join(x for x in (f"no matches for {args.pattern}", note,
                                      *_skipped_lines(skipped)) if x)
    if len(hits) > GREP_CAP:
        hits = hits[:GREP_CAP] + [f"... capped at {GREP_CAP} matches; narrow the pattern or path"]
    return "\n".join(hits + ([note] if note else []) + _skipped_lines(skipped))


# ----- the tool list ------------------------------------------------------------------------
def workspace_tools(sandbox: Sandbox | None = None) -> list[Tool]:
    """read_file, write_file, edit_file, glob, grep and shell (inside `sandbox` when it is
    enabled), ready for a ToolSet."""
    from .shell import shell_tool

    return [
        Tool(
            "read_file",
            "Read a text file with line numbers (offset is the 1-based line to "
            "start at; limit caps the number of lines). An image (PNG, JPEG, GIF, "
            "WebP) is shown to you as a picture, scaled to fit; a PDF as a document.",
            ReadFileInput,
            read_file,
            read_only=True,
            permission="Read",
            rule_target=lambda a: a.path,
        ),
        Tool(
            "write_file",
            "Create or overwrite a file inside the workdir with the given "
            "content (parent directories are created).",
            WriteFileInput,
            write_file,
            permission="Write",
            rule_target=lambda a: a.path,
            preview=preview_write,
        ),
        Tool(
            "edit_file",
            "Replace old_string with new_string in a file. old_string must match "
            "exactly once unless replace_all is true.",
            EditFileInput,
            edit_file,
            permission="Edit",
            rule_target=lambda a: a.path,
            preview=preview_edit,
        ),
        Tool(
            "glob",
            "List files matching a glob pattern, sorted by path. .git, .agent-cli, "
            ".tasks and .team are left out unless path or pattern names them.",
            GlobInput,
            glob_files,
            read_only=True,
            permission="Read",
            rule_target=lambda a: a.path,
        ),
        Tool(
            "grep",
            "Search file contents with a regular expression; prints path:line: text. "
            ".git, .agent-cli, .tasks and .team are left out unless path or glob names them.",
            GrepInput,
            grep,
            read_only=True,
            permission="Read",
            rule_target=lambda a: a.path,
        ),
        shell_tool(sandbox),
    ]
