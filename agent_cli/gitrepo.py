"""The git command line for the host's own operations (snapshots, worktrees, landing).

`GitRepo.find(workdir)` returns the repository the workdir is in (itself or a parent), or
None. `run` calls git with a fixed environment: C locale, agent-cli as the committer, the
GIT_* variables of an outer git (a hook, a rebase) removed, and every configured program the
host does not need switched off (HARDENING): no hooks, no fsmonitor, no pager, no editor, no
external diff or textconv, no credential helper, askpass, ssh command or any remote
transport (team/remote_branches.py opens file, ssh and https for task branches between
hosts), no signing, no automatic gc. A user's config can point those at a file in the
work tree, which a teammate's edit_file can rewrite; the host's git must never run it. What
still runs: the filter drivers (git-lfs, ...) and merge drivers the user's own config
defines, on checkout, add and merge. Host git commands never pass the permission gate: the
host runs them, not a model. A failing command raises GitError with git's own message.
`settle_index` rewrites a fresh checkout's index once its second has passed (racy git).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from .errors import AgentCliError

HOST_NAME = "agent-cli"
HOST_EMAIL = "agent-cli@localhost"
GIT_TIMEOUT_S = 600.0
# An outer git's variables would point our commands at another index or repository.
# Programs named in the environment (GIT_SSH_COMMAND, GIT_EXTERNAL_DIFF, ...) and config
# injected through it (GIT_CONFIG_PARAMETERS, GIT_CONFIG_COUNT) are dropped too.
_DROPPED = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
            "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_PREFIX", "GIT_COMMON_DIR",
            "GIT_SSH", "GIT_SSH_COMMAND", "GIT_EXTERNAL_DIFF", "GIT_ASKPASS", "SSH_ASKPASS",
            "GIT_PROXY_COMMAND", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT",
            "GIT_SEQUENCE_EDITOR")
# Every configured program the host's own git does not need, switched off (see the docstring).
HARDENING = (
    "core.hooksPath=/dev/null",  # no hook: /dev/null/<hook> never exists
    "core.fsmonitor=false",
    "core.pager=cat",
    "core.editor=true",
    "sequence.editor=true",
    "core.askPass=true",
    "core.sshCommand=false",
    "credential.helper=",  # an empty value clears the list of helpers
    "protocol.allow=never",  # no transport (task branches between hosts: remote_branches)
    "submodule.recurse=false",
    "commit.gpgSign=false",
    "tag.gpgSign=false",
    "merge.verifySignatures=false",
    "log.showSignature=false",
    "gc.auto=0",
    "maintenance.auto=false",
)
_CONFIG = (*(arg for item in HARDENING for arg in ("-c", item)),
           "-c", "advice.detachedHead=false", "-c", "core.quotePath=false",
           "-c", "merge.conflictStyle=merge", "--no-pager")
# Commands that would run diff.external or a textconv filter: told not to, every time.
_NO_EXT_DIFF = {"diff": ("--no-ext-diff", "--no-textconv"),
                "log": ("--no-ext-diff", "--no-textconv"),
                "show": ("--no-ext-diff", "--no-textconv")}


class GitError(AgentCliError):
    """A git command failed; the message is git's stderr (first lines)."""


def host_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of every host git command (see _DROPPED, HARDENING)."""
    env = {k: v for k, v in os.environ.items() if k not in _DROPPED}
    env = {k: v for k, v in env.items()
           if not k.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))}
    env.update(
        GIT_TERMINAL_PROMPT="0", GIT_EDITOR="true", GIT_PAGER="cat", LC_ALL="C",
        GIT_SEQUENCE_EDITOR="true",
        GIT_MERGE_AUTOEDIT="no", GIT_COMMITTER_NAME=HOST_NAME, GIT_COMMITTER_EMAIL=HOST_EMAIL,
        GIT_AUTHOR_NAME=HOST_NAME, GIT_AUTHOR_EMAIL=HOST_EMAIL,
    )
    env.update(extra or {})
    return env


def _may_be_in_work_tree(workdir: Path) -> bool:
    """False only when no directory at or above `workdir` (as git sees it: symlinks
    resolved) holds a `.git` entry: git would find no work tree, so none is asked (a start
    outside a repository spawns no git). Anything that cannot be checked: True."""
    here = Path(os.path.realpath(workdir))
    for d in (here, *here.parents):
        try:
            os.lstat(d / ".git")
        except FileNotFoundError:
            continue
        except OSError:
            return True
        return True
    return False


@dataclass(frozen=True)
class GitRepo:
    """A repository's main working tree (`top`), its common git dir, and where the workdir
    sits inside it (`prefix`: "" or "sub/dir/")."""

    top: Path
    common_dir: Path
    prefix: str = ""

    @classmethod
    def find(cls, workdir: Path) -> GitRepo | None:
        """The repository `workdir` belongs to, or None (not in one, no git, a bare repo)."""
        if not _may_be_in_work_tree(workdir):
            return None
        try:
            proc = subprocess.run(
                ["git", *_CONFIG, "rev-parse", "--show-toplevel", "--git-common-dir",
                 "--show-prefix"],
                cwd=workdir, env=host_env(), capture_output=True, text=True, timeout=30,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        lines = proc.stdout.split("\n")
        if proc.returncode != 0 or len(lines) < 3 or not lines[0]:
            return None
        top = Path(lines[0]).resolve()
        common = Path(lines[1])
        if not common.is_absolute():
            common = (Path(workdir) / common).resolve()
        return cls(top, common, lines[2])

    def run(
        self,
        *args: str,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        input: bytes | str | None = None,
        check: bool = True,
    ) -> subprocess.CompletedProcess[str]:
        """git ARGS in `cwd` (the main tree by default); GitError when it fails and `check`."""
        data = input.encode() if isinstance(input, str) else input
        args = (args[0], *_NO_EXT_DIFF.get(args[0], ()), *args[1:]) if args else args
        try:
            proc = subprocess.Popen(
                ["git", *_CONFIG, *args], cwd=cwd or self.top, env=host_env(env),
                stdin=subprocess.PIPE if data is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            )
        except OSError as exc:
            raise GitError(f"git {args[0]} could not run: {exc}") from exc
        # A watchdog, not communicate(timeout=): that one polls the exit with sleeps.
        fired = threading.Event()
        watchdog = threading.Timer(GIT_TIMEOUT_S, lambda: (fired.set(), proc.kill()))
        watchdog.start()
        try:
            stdout, stderr = proc.communicate(data)
        finally:
            watchdog.cancel()
        if fired.is_set():
            raise GitError(f"git {args[0]} could not run: timed out after {GIT_TIMEOUT_S:g}s")
        out = subprocess.CompletedProcess(
            proc.args, proc.returncode,
            stdout.decode("utf-8", "surrogateescape"), stderr.decode("utf-8", "replace"),
        )
        if check and proc.returncode != 0:
            raise GitError(f"git {args[0]} failed: {_first_lines(out.stderr or out.stdout)}")
        return out

    def out(self, *args: str, **kw) -> str:
        """stdout of `run`, stripped of its final newline."""
        return self.run(*args, **kw).stdout.rstrip("\n")

    def rev(self, name: str) -> str | None:
        """The object id `name` names, or None."""
        proc = self.run("rev-parse", "--verify", "-q", name + "^{commit}", check=False)
        return proc.stdout.strip() or None if proc.returncode == 0 else None

    def commits(self, *names: str) -> list[tuple[str, str, list[str]] | None]:
        """(id, tree, parents) of each commit named, None where there is none: one git call."""
        raw = self.run("cat-file", "--batch", input="".join(f"{n}\n" for n in names)
                       ).stdout.encode("utf-8", "surrogateescape")
        found: list[tuple[str, str, list[str]] | None] = []
        pos = 0
        for _ in names:
            end = raw.index(b"\n", pos)
            header, pos = raw[pos:end].split(), end + 1
            if len(header) != 3:  # "NAME missing" (or ambiguous): no object follows
                found.append(None)
                continue
            size = int(header[2])
            body, pos = raw[pos:pos + size], pos + size + 1  # the object, then a newline
            if header[1] != b"commit":
                found.append(None)
                continue
            fields = [ln.split(b" ", 1) for ln in body.split(b"\n\n", 1)[0].split(b"\n")]
            tree = next(v.decode() for k, v in fields if k == b"tree")
            found.append((header[0].decode(), tree,
                          [v.decode() for k, v in fields if k == b"parent"]))
        return found

    def index_path(self, cwd: Path) -> Path:
        """The index file of the working tree at `cwd` (a linked worktree has its own): read
        from its `.git` file ("gitdir: DIR") when it has one, else asked of git."""
        try:
            text = (Path(cwd) / ".git").read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            text = ""
        if text.startswith("gitdir:") and text.count("\n") <= 1:
            gitdir = Path(text[len("gitdir:"):].strip())
            return (gitdir if gitdir.is_absolute() else Path(cwd) / gitdir) / "index"
        real = Path(self.out("rev-parse", "--git-path", "index", cwd=cwd))
        return real if real.is_absolute() else Path(cwd) / real

    def settle_index(self, cwd: Path, guard: Callable[[], AbstractContextManager[bool]]) -> bool:
        """Refresh the index of the tree at `cwd` and put it in place; True when replaced.

        A checkout writes its files and its index in the same second, and git (timestamps
        in seconds) must then re-read every such "racily clean" file in each command that
        looks at the tree, until an index is written in a later second. Called after that
        second, this refreshes a copy (same mtime, so git still re-checks every racy entry:
        nothing is trusted that git would not trust) and renames it over the index under
        git's own index.lock, only when `guard()` yields True and the index is unchanged
        since the copy; any doubt (a lock held, the index rewritten) leaves it as it was.
        """
        index = self.index_path(cwd)
        copy = index.with_name(index.name + ".agent-cli-settle")
        before = _identity(index)
        if before is None:
            return False
        try:
            shutil.copy2(index, copy)  # keeps the mtime: racy entries stay racy
            if _identity(index) != before:
                return False
            self.run("update-index", "-q", "--refresh", cwd=cwd, check=False,
                     env={"GIT_INDEX_FILE": str(copy)})
            if os.stat(copy).st_mtime_ns == before[2]:
                return False  # git had nothing to rewrite
            with guard() as allowed:
                return allowed and _swap_locked(index, copy, before)
        finally:
            for p in (copy, copy.with_name(copy.name + ".lock")):
                p.unlink(missing_ok=True)

    def ensure_excluded(self, pattern: str) -> None:
        """Add `pattern` to .git/info/exclude once (the user's .gitignore is never touched)."""
        path = self.common_dir / "info" / "exclude"
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            text = ""
        if pattern in text.splitlines():
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        sep = "" if not text or text.endswith("\n") else "\n"
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"{sep}# agent-cli: task worktrees and session state\n{pattern}\n")


def _identity(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


def _swap_locked(index: Path, new: Path, before: tuple[int, int, int]) -> bool:
    """os.replace(new, index) holding index.lock (git's protocol), if index is `before`."""
    lock = index.with_name(index.name + ".lock")
    try:
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError:  # a git command holds it: leave the index to it
        return False
    try:
        if _identity(index) != before:
            return False
        os.replace(new, index)
        return True
    finally:
        mine = os.fstat(fd).st_ino
        os.close(fd)
        try:
            if os.lstat(lock).st_ino == mine:  # never another process's lock
                os.unlink(lock)
        except FileNotFoundError:
            pass


def _first_lines(text: str, n: int = 4) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return "; ".join(lines[:n]) or "(no message)"
