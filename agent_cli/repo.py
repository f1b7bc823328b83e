"""Where the git repository around a workdir begins, and its `info/exclude` file.

Pure path work (no git process): a `.git` directory, or a `.git` file (`gitdir: ...`, a
worktree or submodule) marks the repository root. Used by project memory (how far up to
look), the settings layers (keeping settings.local.json out of git) and the runtime (keeping
the board and the team's files out of git).
"""

from __future__ import annotations

from pathlib import Path

from .errors import StorageError


def find_repo_root(start: Path) -> Path | None:
    """The nearest directory at or above `start` holding `.git`, or None outside a repo."""
    here = Path(start).resolve()
    for d in (here, *here.parents):
        try:
            if (d / ".git").exists():
                return d
        except OSError:
            continue
    return None


def git_common_dir(root: Path) -> Path | None:
    """The repository's common git directory (where info/exclude lives), or None."""
    dot = Path(root) / ".git"
    if dot.is_dir():
        return dot
    try:
        text = dot.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    line = text.strip().splitlines()[0] if text.strip() else ""
    if not line.startswith("gitdir:"):
        return None
    gitdir = (Path(root) / line.split(":", 1)[1].strip()).resolve()
    try:
        common = (gitdir / "commondir").read_text(encoding="utf-8").strip()
    except OSError:
        return gitdir
    return (gitdir / common).resolve()


def add_to_exclude(root: Path, pattern: str) -> bool:
    """Append `pattern` to the repository's info/exclude unless a line already says it.

    Returns True when the file changed; False when already there or not writable (a
    settings.local.json that git could see is not worth failing a save over).
    """
    common = git_common_dir(root)
    if common is None:
        return False
    path = common / "info" / "exclude"
    try:
        existing = path.read_text(encoding="utf-8") if path.exists() else ""
        if pattern in (line.strip() for line in existing.splitlines()):
            return False
        path.parent.mkdir(parents=True, exist_ok=True)
        sep = "" if not existing or existing.endswith("\n") else "\n"
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"{sep}{pattern}\n")
        return True
    except OSError:
        return False


def remove_from_exclude(root: Path, pattern: str) -> bool:
    """Drop the lines that say exactly `pattern` from info/exclude; True when any went."""
    common = git_common_dir(root)
    if common is None:
        return False
    path = common / "info" / "exclude"
    try:
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        kept = [line for line in lines if line.strip() != pattern]
        if len(kept) == len(lines):
            return False
        from .fsutil import atomic_write_text

        atomic_write_text(path, "".join(kept))
        return True
    except (OSError, StorageError):
        return False


def _escaped(path: str) -> str:
    """`path` as literal gitignore text (its glob characters escaped)."""
    return "".join("\\" + c if c in "\\*?[" else c for c in path)


def keep_state_out_of_git(workdir: Path, commit_board: bool = False) -> list[str]:
    """In a repository, put the workdir's `.team/` (inboxes, transcripts, audit log) and,
    unless `commit_board`, its `.tasks/` into info/exclude, anchored to the workdir; with
    `commit_board` a `.tasks/` line written earlier is taken out again. The lines added."""
    root = find_repo_root(workdir)
    if root is None:
        return []
    try:
        rel = Path(workdir).resolve().relative_to(root).as_posix()
    except ValueError:
        return []
    if "\n" in rel or "\r" in rel:  # cannot be one exclude line
        return []
    base = "/" if rel == "." else f"/{_escaped(rel)}/"
    added = [p for p in (f"{base}.team/",) if add_to_exclude(root, p)]
    board = f"{base}.tasks/"
    if commit_board:
        remove_from_exclude(root, board)
    elif add_to_exclude(root, board):
        added.append(board)
    return added
