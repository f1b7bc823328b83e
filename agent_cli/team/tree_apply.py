"""Step 4 of landing: put a task's change into the user's main working tree, crash-safely.

`plan(base, merged)` lists, per file the change base..merged touches, what the main tree
holds now (`pre`) and what it must hold (`post`). When the main tree changed one of those
files since `base`, the change is applied to a fresh snapshot of it (git diff | git apply
--cached on a private index); None when it changed the same lines (the caller merges again).
`stage_files` checks out every new file under a stage directory with `git checkout-index`
(modes, symlinks, filters by git); the caller journals the plan; `finish` moves each file
into place with os.replace (deletions unlink). A file is only replaced while it still
holds `pre`, so a user's edit is never overwritten; the user's index is never touched.
`finish(files)` is idempotent: a run killed halfway is finished from the journal.
"""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from ..gitrepo import GitError, GitRepo
from ..relpaths import UnsafePath, check_relpath, is_real_dir, kind_at, open_parent
from .snapshot import Snapshots, excludes

NULL_MODE = "000000"


@dataclass
class Plan:
    now: str  # the snapshot of the main tree the plan was made against
    files: list[dict]  # {"path", "pre": [mode, sha] | None, "post": [mode, sha] | None}


class TreeApply:
    def __init__(self, repo: GitRepo, snapshots: Snapshots, private: Path) -> None:
        self.repo = repo
        self.snapshots = snapshots
        self.stage = private / "landing-stage"  # host-private (private_state.py)
        self.index = private / "landing.index"

    # ----- plan ------------------------------------------------------------------------
    def plan(self, base: str, merged: str) -> Plan | None:
        """The files to write, each still holding its `pre` in the main tree; None: merge
        again (the main tree changed the same lines)."""
        files = self._diff(base, merged)
        if not self.changed_since(files):  # the main tree still holds base's version of each
            return Plan(base, files)
        now = self.snapshots.take()
        target = self._target(base, merged, now)
        if target is None:
            return None
        plan = Plan(now, self._diff(now, target))
        return None if self.changed_since(plan.files) else plan  # changed again meanwhile

    def _diff(self, old: str, new: str) -> list[dict]:
        out = self.repo.run("diff-tree", "-r", "-z", "--no-renames", old, new, "--",
                            ".", *excludes(self.repo.prefix)).stdout
        return _parse_raw(out)

    def _target(self, base: str, merged: str, now: str) -> str | None:
        """The tree the main tree must become: `now` plus the change base..merged."""
        if self._tree(now) == self._tree(base):
            return self._tree(merged)
        patch = self.repo.run("diff", "--binary", "--no-renames", "--full-index", base, merged,
                              "--", ".", *excludes(self.repo.prefix)).stdout
        if not patch.strip():
            return self._tree(now)
        env = {"GIT_INDEX_FILE": str(self.index)}
        try:
            self.repo.run("read-tree", now, env=env)
            applied = self.repo.run("apply", "--cached", "--binary", env=env,
                                    input=patch.encode("utf-8", "surrogateescape"), check=False)
            if applied.returncode != 0:
                return None  # the main tree changed the same lines: merge it again
            return self.repo.out("write-tree", env=env)
        finally:
            _unlink(self.index)

    def _tree(self, commit: str) -> str:
        return self.repo.out("rev-parse", commit + "^{tree}")

    # ----- write -----------------------------------------------------------------------
    def changed_since(self, files: list[dict]) -> list[str]:
        """Paths whose content in the main tree is no longer their `pre` (empty: none)."""
        current = self._current([f["path"] for f in files])
        return [f["path"] for f in files if current[f["path"]] != _pair(f["pre"])]

    def check_paths(self, files: list[dict]) -> None:
        """GitError when a parent of a path is a symlink or a file in the main tree."""
        for f in files:
            parent = self.repo.top
            for part in Path(f["path"]).parts[:-1]:
                parent = parent / part
                if parent.is_symlink() or (parent.exists() and not parent.is_dir()):
                    raise GitError(f"cannot land {f['path']}: {parent.relative_to(self.repo.top)}"
                                   " is a symlink or a file in your tree")

    def stage_files(self, files: list[dict]) -> None:
        """Every `post` file checked out under the stage directory by git."""
        shutil.rmtree(self.stage, ignore_errors=True)
        lines = [f"{f['post'][0]} {f['post'][1]}\t{f['path']}" for f in files if f["post"]]
        if not lines:
            return
        env = {"GIT_INDEX_FILE": str(self.index)}
        try:
            _unlink(self.index)
            self.repo.run("update-index", "-z", "--index-info", env=env,
                          input="\0".join(lines) + "\0")
            self.repo.run("checkout-index", "-a", "-f", f"--prefix={self.stage}/", env=env)
        finally:
            _unlink(self.index)

    def finish(self, files: list[dict], on_file=None) -> list[str]:
        """Move each staged file into place (or delete); idempotent. Returns the paths left
        alone because the user changed them since the plan was made. `on_file(path)` runs
        after each file (tests kill the process there). Every path is confined first
        (relpaths: relative, no `..`, no symlink on the way): a bad one is UnsafePath and
        nothing is touched."""
        for f in files:
            check_relpath(f["path"])
        current = self._current([f["path"] for f in files])
        skipped = []
        for f in sorted(files, key=lambda f: (f["post"] is not None, f["path"])):
            path, pre, post = f["path"], _pair(f["pre"]), _pair(f["post"])
            cur = current[path]
            if cur == post:
                continue
            if cur != pre:
                skipped.append(path)
                continue
            try:
                if post is None:
                    self._unlink(path)
                    continue
                staged = self.stage / path
                if not staged.exists() and not staged.is_symlink():
                    self.stage_files([f])
                self._put(staged, path)
            except UnsafePath:  # a symlink or file swapped in on the way: never written through
                skipped.append(path)
                continue
            if on_file is not None:
                on_file(path)
        shutil.rmtree(self.stage, ignore_errors=True)
        return skipped

    def _unlink(self, path: str) -> None:
        dfd, name = open_parent(self.repo.top, path)
        try:
            os.unlink(name, dir_fd=dfd)
        finally:
            os.close(dfd)
        self._prune_dirs((self.repo.top / path).parent)

    def _put(self, staged: Path, path: str) -> None:
        """os.replace the staged file over `path` in the main tree, through the fd of its
        directory (a copy first when the stage is on another file system)."""
        dfd, name = open_parent(self.repo.top, path, create=True)
        try:
            if is_real_dir(kind_at(dfd, name)):
                shutil.rmtree(name, dir_fd=dfd)  # held only files the change deletes
            _fsync_file(staged)
            try:
                os.replace(staged, name, dst_dir_fd=dfd)
            except OSError as exc:
                if exc.errno != errno.EXDEV:
                    raise
                tmp = f".{name[:200]}.agent-cli-land"
                if staged.is_symlink():
                    os.symlink(os.readlink(staged), tmp, dir_fd=dfd)
                else:
                    with open(staged, "rb") as src, open(tmp, "xb", opener=_opener(dfd)) as dst:
                        shutil.copyfileobj(src, dst)
                        os.fchmod(dst.fileno(), os.stat(staged).st_mode & 0o7777)
                        os.fsync(dst.fileno())
                os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        finally:
            os.close(dfd)

    def _prune_dirs(self, d: Path) -> None:
        while d != self.repo.top and d.is_relative_to(self.repo.top):
            try:
                d.rmdir()
            except OSError:
                return
            d = d.parent

    def _current(self, paths: list[str]) -> dict[str, tuple[str, str] | None]:
        """(mode, blob id) of each path in the main tree as it is on disk, None if absent."""
        out: dict[str, tuple[str, str] | None] = {}
        regular: list[tuple[str, str]] = []
        for p in paths:
            full = self.repo.top / p
            try:
                os.close(open_parent(self.repo.top, p)[0])  # no symlink on the way
                st = os.lstat(full)
            except (UnsafePath, FileNotFoundError, NotADirectoryError):
                # (a symlink on the way: check_paths / finish refuse to write through it)
                out[p] = None
                continue
            if stat.S_ISLNK(st.st_mode):
                out[p] = ("120000", self._blob_id(os.readlink(full).encode()))
            elif stat.S_ISREG(st.st_mode):
                regular.append((p, "100755" if st.st_mode & 0o111 else "100644"))
            else:
                out[p] = ("dir", "")
        if regular:
            ids = self.repo.out("hash-object", "--stdin-paths",
                                input="\n".join(p for p, _ in regular) + "\n").split("\n")
            for (p, mode), oid in zip(regular, ids, strict=True):
                out[p] = (mode, oid)
        return out

    def _blob_id(self, data: bytes) -> str:
        if not hasattr(self, "_algo"):
            fmt = self.repo.run("rev-parse", "--show-object-format", check=False).stdout.strip()
            self._algo = fmt or "sha1"
        h = hashlib.new(self._algo)
        h.update(b"blob %d\0" % len(data) + data)
        return h.hexdigest()


def _parse_raw(out: str) -> list[dict]:
    """`git diff-tree -r -z` raw output -> file records."""
    parts = out.split("\0")
    files = []
    i = 0
    while i + 1 < len(parts) and parts[i].startswith(":"):
        src_mode, dst_mode, src, dst, _status = parts[i][1:].split(" ")
        files.append({
            "path": parts[i + 1],
            "pre": None if src_mode == NULL_MODE else [src_mode, src],
            "post": None if dst_mode == NULL_MODE else [dst_mode, dst],
        })
        i += 2
    return files


def _pair(value: list | None) -> tuple[str, str] | None:
    return None if value is None else (value[0], value[1])


def _fsync_file(path: Path) -> None:
    if path.is_symlink():
        return
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _opener(dir_fd: int):
    def opener(name: str, flags: int) -> int:
        return os.open(name, flags | os.O_NOFOLLOW, 0o600, dir_fd=dir_fd)
    return opener


def _unlink(path: Path) -> None:
    for p in (path, Path(str(path) + ".lock")):
        try:
            os.unlink(p)
        except FileNotFoundError:
            pass
