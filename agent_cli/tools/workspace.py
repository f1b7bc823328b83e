"""The workspace tools: read_file, write_file, edit_file, glob, grep (+ shell from shell.py).

Every path goes through tools.paths (confined to the workdir, symlinks resolved). Writes are
atomic (temp file + os.replace) and keep the file's mode; line endings are preserved. Results
speak in workdir-relative paths. `workspace_tools()` returns all six tools.
"""

from __future__ import annotations

import difflib
import fnmatch
import os
import re
import stat
import tempfile
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from ..errors import ToolError
from .base import Tool, ToolContext
from .paths import display_path, resolve_path

MAX_LINE_CHARS = 2000
GLOB_CAP = 500
GREP_CAP = 200
GREP_LINE_CHARS = 300
GREP_MAX_FILE_BYTES = 5_000_000
PREVIEW_LINES = 400
SKIP_DIRS = frozenset({".git", ".hg", ".svn", "__pycache__", "node_modules", ".venv"})


# ----- helpers ------------------------------------------------------------------------------
def _read_text(path: Path, shown: str) -> str:
    if path.is_dir():
        raise ToolError(f"{shown} is a directory (use glob to list it)")
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ToolError(f"no such file: {shown}") from None
    except OSError as exc:
        raise ToolError(f"cannot read {shown}: {exc.strerror or exc}") from None
    if b"\x00" in data[:8192]:
        raise ToolError(f"{shown} is a binary file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"{shown} is not UTF-8 text") from None


def _write_text(path: Path, text: str, shown: str) -> None:
    """Atomic write keeping the old file's permission bits (new files: 0644 minus umask)."""
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:200]}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except OSError as exc:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
        raise ToolError(f"cannot write {shown}: {exc.strerror or exc}") from None


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


def _current(path: Path, shown: str) -> str:
    return _read_text(path, shown) if path.exists() else ""


# ----- read_file ----------------------------------------------------------------------------
class ReadFileInput(BaseModel):
    model_config = ConfigDict(defer_build=True)

    path: str = Field(description="File path, relative to the workdir")
    offset: int = Field(0, ge=0, description="1-based line to start at (0 = from the top)")
    limit: int = Field(2000, ge=1, le=10_000, description="Maximum number of lines")


def read_file(args: ReadFileInput, ctx: ToolContext) -> str:
    path = resolve_path(ctx.workdir, args.path)
    shown = display_path(ctx.workdir, path)
    lines = _read_text(path, shown).splitlines()
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


def _write_target(ctx: ToolContext, raw: str) -> tuple[Path, str]:
    path = resolve_path(ctx.workdir, raw)
    shown = display_path(ctx.workdir, path)
    if path.is_dir():
        raise ToolError(f"{shown} is a directory")
    return path, shown


def write_file(args: WriteFileInput, ctx: ToolContext) -> str:
    path, shown = _write_target(ctx, args.path)
    existed = path.exists()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ToolError(f"cannot create the directory of {shown}: {exc.strerror or exc}") from None
    resolve_path(ctx.workdir, str(path))  # the new directories are still inside
    _write_text(path, args.content, shown)
    n = len(args.content.splitlines())
    verb = "Overwrote" if existed else "Created"
    return f"{verb} {shown} ({n} lines, {len(args.content.encode('utf-8'))} bytes)"


def preview_write(args: WriteFileInput, ctx: ToolContext) -> str:
    path, shown = _write_target(ctx, args.path)
    return _diff(_current(path, shown), args.content, shown)


# ----- edit_file ----------------------------------------------------------------------------
class EditFileInput(BaseModel):
    model_config = ConfigDict(defer_build=True)

    path: str = Field(description="File path, relative to the workdir")
    old_string: str = Field(description="Exact text to replace (must be unique unless replace_all)")
    new_string: str = Field(description="Replacement text")
    replace_all: bool = Field(False, description="Replace every occurrence")


def _edited(args: EditFileInput, ctx: ToolContext) -> tuple[Path, str, str, str, int]:
    path = resolve_path(ctx.workdir, args.path)
    shown = display_path(ctx.workdir, path)
    if not args.old_string:
        raise ToolError("old_string is empty; use write_file to create or replace a whole file")
    if args.old_string == args.new_string:
        raise ToolError("old_string and new_string are the same; nothing to change")
    old = _read_text(path, shown)
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
    return path, shown, old, new, count


def edit_file(args: EditFileInput, ctx: ToolContext) -> str:
    path, shown, _old, new, count = _edited(args, ctx)
    _write_text(path, new, shown)
    return f"Edited {shown}: replaced {count} occurrence{'s' if count > 1 else ''}"


def preview_edit(args: EditFileInput, ctx: ToolContext) -> str:
    _path, shown, old, new, _count = _edited(args, ctx)
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
    base = resolve_path(ctx.workdir, args.path)
    if not base.is_dir():
        raise ToolError(f"{display_path(ctx.workdir, base)} is not a directory")
    root = os.path.realpath(ctx.workdir)
    found: list[str] = []
    try:
        for p in base.glob(args.pattern):
            real = os.path.realpath(p)
            if real != root and not real.startswith(root + os.sep):
                continue  # reached through a symlink that leads outside
            if any(part in SKIP_DIRS for part in p.relative_to(base).parts[:-1]):
                continue
            rel = Path(os.path.relpath(p, root)).as_posix()
            found.append(rel + "/" if p.is_dir() else rel)
    except (ValueError, OSError) as exc:
        raise ToolError(f"glob {args.pattern!r} failed: {exc}") from None
    if not found:
        return f"no files match {args.pattern}"
    found.sort()
    shown = found[:GLOB_CAP]
    if len(found) > GLOB_CAP:
        shown.append(f"... {len(found) - GLOB_CAP} more (capped at {GLOB_CAP}); narrow the pattern")
    return "\n".join(shown)


# ----- grep ---------------------------------------------------------------------------------
class GrepInput(BaseModel):
    model_config = ConfigDict(defer_build=True)

    pattern: str = Field(description="Python regular expression")
    path: str = Field(".", description="File or directory to search, relative to the workdir")
    glob: str | None = Field(None, description="Only files matching this glob, e.g. '*.py'")


def _grep_files(base: Path, root: str, glob: str | None):
    if base.is_file():
        yield base
        return
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in sorted(filenames):
            p = Path(dirpath) / name
            rel = Path(os.path.relpath(p, root)).as_posix()
            if glob and not (fnmatch.fnmatch(name, glob) or fnmatch.fnmatch(rel, glob)):
                continue
            real = os.path.realpath(p)
            if real.startswith(root + os.sep):
                yield p


def _grep_one(path: Path, regex: re.Pattern[str], rel: str, hits: list[str], cap: int) -> None:
    try:
        if path.stat().st_size > GREP_MAX_FILE_BYTES:
            return
        data = path.read_bytes()
    except OSError:
        return
    if b"\x00" in data[:8192]:
        return
    for n, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        if regex.search(line):
            if len(line) > GREP_LINE_CHARS:
                line = line[:GREP_LINE_CHARS] + "..."
            hits.append(f"{rel}:{n}: {line}")
            if len(hits) > cap:
                return


def grep(args: GrepInput, ctx: ToolContext) -> str:
    try:
        regex = re.compile(args.pattern)
    except re.error as exc:
        raise ToolError(f"invalid regex {args.pattern!r}: {exc}") from None
    base = resolve_path(ctx.workdir, args.path)
    if not base.exists():
        raise ToolError(f"no such file or directory: {args.path}")
    root = os.path.realpath(ctx.workdir)
    hits: list[str] = []
    for p in _grep_files(base, root, args.glob):
        _grep_one(p, regex, Path(os.path.relpath(p, root)).as_posix(), hits, GREP_CAP)
        if len(hits) > GREP_CAP:
            break
    if not hits:
        return f"no matches for {args.pattern}"
    if len(hits) > GREP_CAP:
        hits = hits[:GREP_CAP] + [f"... capped at {GREP_CAP} matches; narrow the pattern or path"]
    return "\n".join(hits)


# ----- the tool list ------------------------------------------------------------------------
def workspace_tools() -> list[Tool]:
    """read_file, write_file, edit_file, glob, grep and shell, ready for a ToolSet."""
    from .shell import shell_tool

    return [
        Tool(
            "read_file",
            "Read a text file with line numbers. offset is the 1-based line to "
            "start at; limit caps the number of lines.",
            ReadFileInput,
            read_file,
            read_only=True,
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
            "List files matching a glob pattern, sorted by path.",
            GlobInput,
            glob_files,
            read_only=True,
        ),
        Tool(
            "grep",
            "Search file contents with a regular expression; prints path:line: text.",
            GrepInput,
            grep,
            read_only=True,
        ),
        shell_tool(),
    ]
