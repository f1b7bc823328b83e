"""Project memory: AGENTS.md / CLAUDE.md / .claude/CLAUDE.md / CLAUDE.local.md from the
workdir up to the repository root (root first), after the user's own `~/.agent-cli/AGENTS.md`
and `~/.claude/CLAUDE.md` ($CLAUDE_CONFIG_DIR), with `@path` imports as Claude Code reads them.

Every file is opened without following a symlink out of its boundary (the repository, or the
workdir outside one; for the user's own files, which may be dotfiles symlinks, the directory
each really lives in), must be a regular file (a FIFO or a directory is reported, never read),
and is cut at 40 KB with a warning; at most 100 files are read. An import is `@path` anywhere
in the prose (never inside a code span or a fenced block): a line that is only `@path` is
replaced by the file, one named inside a sentence is added after that line. Paths are
relative to the importing file, at most 5 levels deep, never outside the boundary; `@~/...`
reaches the home directory from the user's own files only, never from a repository's. A
missing or refused import is one warning (a bare `@name` inside a sentence that names no
file is a mention, not an import). Nothing here raises for a bad file: problems are warnings.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .repo import find_repo_root

MEMORY_NAMES = ("AGENTS.md", "CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md")
MAX_BYTES = 40 * 1024
MAX_DEPTH = 5
MAX_FILES = 100  # files in all (memory files + imports): a fan-out of imports stops here
IMPORT_RE = re.compile(r"^\s*@(\S+)\s*$")
INLINE_RE = re.compile(r"(?<![\w@`/])@([~\w./-][^\s`<>]*)")
CODE_SPAN_RE = re.compile(r"(`+)[^`]*?\1")
HEADING = "# Project memory"


@dataclass(frozen=True)
class MemoryFile:
    """One file that was loaded: where, how big on disk, cut or not, who imported it."""

    path: Path
    size: int
    truncated: bool = False
    imported_by: Path | None = None


@dataclass
class ProjectMemory:
    files: list[MemoryFile] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    sections: list[tuple[Path, str]] = field(default_factory=list)  # top-level file, text

    def block(self) -> str:
        """The system-prompt section ("" when nothing was loaded)."""
        parts = [f"## {path}\n\n{text.strip()}" for path, text in self.sections if text.strip()]
        if not parts:
            return ""
        intro = ("Instructions from the project's memory files (AGENTS.md, CLAUDE.md, "
                 "CLAUDE.local.md) and the user's own; follow them.")
        return "\n\n".join([HEADING, intro, *parts])


class _Reader:
    def __init__(self, memory: ProjectMemory, withheld: Callable[[Path], str] | None = None
                 ) -> None:
        self.memory = memory
        self.seen: set[Path] = set()
        self.withheld = withheld  # the Read rule that keeps a file from the model, or ""

    def read(self, path: Path, boundary: Path) -> tuple[bytes, int] | None:
        """(content up to MAX_BYTES, size) of a regular file inside `boundary`, else None."""
        real = Path(os.path.realpath(path))
        if not real.is_relative_to(boundary):
            self.memory.warnings.append(f"{path}: points outside {boundary}; not loaded")
            return None
        try:
            fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except FileNotFoundError:
            return None
        except OSError as exc:
            self.memory.warnings.append(f"{path}: cannot read ({exc.strerror or exc})")
            return None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                self.memory.warnings.append(f"{path}: not a regular file; not loaded")
                return None
            data = os.read(fd, MAX_BYTES + 1) if st.st_size else b""
            return data, st.st_size
        except OSError as exc:
            self.memory.warnings.append(f"{path}: cannot read ({exc.strerror or exc})")
            return None
        finally:
            os.close(fd)

    def load(self, path: Path, boundary: Path, imports: tuple[Path, ...], depth: int = 0,
             parent: Path | None = None, user: bool = False) -> str | None:
        """The file's text with its imports expanded, or None when it was not loaded.

        The file itself must be inside `boundary`; what it imports, inside one of `imports`.
        `user`: the user's own file, which may import `@~/...` from the home directory.
        """
        real = Path(os.path.realpath(path))
        rule = self.withheld(real) if self.withheld is not None else ""
        if rule:
            self.memory.warnings.append(f"{path}: not loaded (withheld by permission rule {rule})")
            return None
        if real in self.seen:
            if parent is not None:
                self.memory.warnings.append(f"{parent}: @{path.name} was already loaded; skipped")
            return None
        got = self.read(path, boundary)
        if got is None:
            return None
        if len(self.memory.files) >= MAX_FILES:
            self.memory.warnings.append(f"{path}: not loaded (at most {MAX_FILES} memory files)")
            return None
        self.seen.add(real)
        data, size = got
        cut = len(data) > MAX_BYTES
        if cut:
            data = data[:MAX_BYTES]
            self.memory.warnings.append(
                f"{path}: {size} bytes, over the {MAX_BYTES // 1024} KB limit; truncated")
        self.memory.files.append(MemoryFile(path, size, cut, parent))
        text = data.decode("utf-8", errors="replace")
        return self._expand(text, path, imports, depth, user)

    def _expand(self, text: str, path: Path, roots: tuple[Path, ...], depth: int,
                user: bool) -> str:
        out: list[str] = []
        in_fence = False
        for number, line in enumerate(text.splitlines(), start=1):
            if line.lstrip().startswith(("```", "~~~")):
                in_fence = not in_fence
            if in_fence:
                out.append(line)
                continue
            where = f"{path}:{number}"
            m = IMPORT_RE.match(line)
            if m is not None:  # a line that is only `@path`: the file takes its place
                loaded = self._import(m.group(1), where, path, roots, depth, user, True)
                if loaded is not None:
                    out.append(loaded)
                continue
            out.append(line)
            for target in inline_imports(line):  # `see @docs/x.md`: the file follows the line
                loaded = self._import(target, where, path, roots, depth, user, False)
                if loaded is not None:
                    out.append(loaded)
        return "\n".join(out)

    def _import(self, target: str, where: str, path: Path, roots: tuple[Path, ...],
                depth: int, user: bool, whole_line: bool) -> str | None:
        warn = self.memory.warnings.append
        if depth + 1 > MAX_DEPTH:
            warn(f"{where}: @{target} not imported (imports nest at most {MAX_DEPTH} deep)")
            return None
        if target.startswith("~/") and user:
            child = Path.home() / target[2:]
        elif target.startswith("~"):
            warn(f"{where}: @{target} not imported (a repository's file may not import from "
                 "the home directory)")
            return None
        elif target.startswith("/"):
            warn(f"{where}: @{target} not imported (imports are relative paths)")
            return None
        else:
            child = path.parent / target
        if not any(Path(os.path.realpath(child)).is_relative_to(r) for r in roots):
            warn(f"{where}: @{target} not imported (outside {roots[0]})")
            return None
        if not os.path.exists(child):
            if whole_line or "/" in target or "." in target:  # `@alice` is a mention
                warn(f"{where}: @{target} not found")
            return None
        boundary = next(r for r in roots if Path(os.path.realpath(child)).is_relative_to(r))
        return self.load(child, boundary, roots, depth + 1, path, user)


def inline_imports(line: str) -> list[str]:
    """The `@path` references in a line of prose, outside `code spans` (an e-mail address
    or a `@` inside a word is none)."""
    spans = [m.span() for m in CODE_SPAN_RE.finditer(line)]
    found = []
    for m in INLINE_RE.finditer(line):
        if any(a <= m.start() < b for a, b in spans):
            continue
        target = m.group(1).rstrip(".,;:!?)]}'\"")
        if target and target not in found:
            found.append(target)
    return found


def memory_dirs(workdir: Path) -> tuple[list[Path], Path]:
    """The directories to look in, root first, and the boundary imports must stay inside."""
    wd = Path(os.path.realpath(workdir))
    root = find_repo_root(wd)
    top = root if root is not None else Path(wd.anchor)
    dirs = [wd]
    for parent in wd.parents:
        if not parent.is_relative_to(top):
            break
        dirs.append(parent)
    return list(reversed(dirs)), (Path(os.path.realpath(root)) if root is not None else wd)


def load_memory(workdir: Path, user_dir: Path | None = None,
                claude_dir: Path | None = None,
                withheld: Callable[[Path], str] | None = None) -> ProjectMemory:
    """Read the user's own files (AGENTS.md in `user_dir`, CLAUDE.md in `claude_dir`), then
    each level's memory files from the root down; a file (or import) `withheld` names a rule
    for is not loaded (a Read deny rule covers it)."""
    memory = ProjectMemory()
    reader = _Reader(memory, withheld)
    for folder, name in ((user_dir, "AGENTS.md"), (claude_dir, "CLAUDE.md")):
        if folder is not None:
            _user_file(reader, Path(folder) / name)
    dirs, boundary = memory_dirs(workdir)
    for d in dirs:
        # A level above an outside-a-repo workdir: the file stays in its own directory;
        # imports never leave the boundary.
        own = boundary if d.is_relative_to(boundary) else d
        for name in MEMORY_NAMES:
            path = d / name
            text = reader.load(path, own, (boundary,))
            if text is not None:
                memory.sections.append((path, text))
    return memory


def _user_file(reader: _Reader, path: Path) -> None:
    """One of the user's own memory files. It may be a symlink (dotfiles): it is read where
    it really lives, and it imports from beside it or, with `@~/...`, from the home."""
    real = Path(os.path.realpath(path))
    home = Path(os.path.realpath(Path.home()))
    text = reader.load(real, real.parent, (real.parent, home), user=True)
    if text is not None:
        reader.memory.sections.append((real, text))
