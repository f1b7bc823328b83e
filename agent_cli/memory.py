"""Project memory: AGENTS.md / CLAUDE.md / CLAUDE.local.md from the workdir up to the repository
root (root first), plus the user's `~/.agent-cli/AGENTS.md`, with `@relative/path` imports.

Every file is opened without following a symlink out of its boundary (the repository, or the
workdir outside one; for the user's own AGENTS.md, which may be a dotfiles symlink, the
directory it really lives in), must be a regular file (a FIFO or a directory is reported,
never read), and is cut at 40 KB with a warning; at most 100 files are read. An import line
is a line that is only `@path`: it is replaced by that file (relative to the importing file,
at most 5 levels deep, never outside the boundary; a missing or refused import is one
warning). Nothing here raises for a bad file: problems are warnings.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .repo import find_repo_root

MEMORY_NAMES = ("AGENTS.md", "CLAUDE.md", "CLAUDE.local.md")
MAX_BYTES = 40 * 1024
MAX_DEPTH = 5
MAX_FILES = 100  # files in all (memory files + imports): a fan-out of imports stops here
IMPORT_RE = re.compile(r"^\s*@(\S+)\s*$")
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

    def load(self, path: Path, boundary: Path, imports: Path, depth: int = 0,
             parent: Path | None = None) -> str | None:
        """The file's text with its imports expanded, or None when it was not loaded.

        The file itself must be inside `boundary`; what it imports, inside `imports`.
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
        return self._expand(text, path, imports, depth)

    def _expand(self, text: str, path: Path, boundary: Path, depth: int) -> str:
        out: list[str] = []
        in_fence = False
        for number, line in enumerate(text.splitlines(), start=1):
            if line.lstrip().startswith("```"):
                in_fence = not in_fence
            m = None if in_fence else IMPORT_RE.match(line)
            if m is None:
                out.append(line)
                continue
            where = f"{path}:{number}"
            target = m.group(1)
            if depth + 1 > MAX_DEPTH:
                self.memory.warnings.append(
                    f"{where}: @{target} not imported (imports nest at most {MAX_DEPTH} deep)")
                continue
            if target.startswith(("/", "~")):
                self.memory.warnings.append(
                    f"{where}: @{target} not imported (imports are relative paths)")
                continue
            child = path.parent / target
            if not Path(os.path.realpath(child)).is_relative_to(boundary):
                self.memory.warnings.append(
                    f"{where}: @{target} not imported (outside {boundary})")
                continue
            if not os.path.exists(child):
                self.memory.warnings.append(f"{where}: @{target} not found")
                continue
            loaded = self.load(child, boundary, boundary, depth + 1, path)
            if loaded is not None:
                out.append(loaded)
        return "\n".join(out)


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
                withheld: Callable[[Path], str] | None = None) -> ProjectMemory:
    """Read the user's AGENTS.md, then each level's memory files from the root down; a file
    (or import) `withheld` names a rule for is not loaded (a Read deny rule covers it)."""
    memory = ProjectMemory()
    reader = _Reader(memory, withheld)
    if user_dir is not None:
        # The user's own file may be a symlink (dotfiles): its imports stay beside its target.
        ufile = Path(os.path.realpath(Path(user_dir) / "AGENTS.md"))
        text = reader.load(ufile, ufile.parent, ufile.parent)
        if text is not None:
            memory.sections.append((ufile, text))
    dirs, boundary = memory_dirs(workdir)
    for d in dirs:
        # A level above an outside-a-repo workdir: the file stays in its own directory;
        # imports never leave the boundary.
        own = boundary if d.is_relative_to(boundary) else d
        for name in MEMORY_NAMES:
            path = d / name
            text = reader.load(path, own, boundary)
            if text is not None:
                memory.sections.append((path, text))
    return memory
