"""Worktrees: a git worktree per claimed task, so teammates never edit the same files at once.

In a git repository (the workdir or a parent) and unless `--worktrees off` / settings
`"worktrees": "off"`, a teammate's claim gets `.agent-cli/worktrees/task-<id>/` on branch
`agent-cli/task-<id>`, started from a snapshot of the main tree (uncommitted and untracked
files included). While the teammate holds the task its Workspace is that worktree. A released
task keeps its worktree; the next claimer continues in it. Landing is team/landing.py.
A new worktree's index is settled in the background once its checkout's second has passed
(GitRepo.settle_index), so the landing's `git add -A` does not re-read all its files.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import StorageError, UserError
from ..gitrepo import GitError, GitRepo
from ..locking import StateLock
from ..private_state import PrivateStore
from ..tools.workspace_root import Workspace
from .snapshot import Snapshots
from .worktree_state import WorktreeState

if TYPE_CHECKING:
    from ..board.models import Task
    from ..board.store import TaskBoard

MODES = ("auto", "on", "off")
STATE_NAME = "worktrees.json"
BRANCH_PREFIX = "agent-cli/task-"


def setting_mode(workdir: Path) -> str | None:
    """`"worktrees"` from .agent-cli/settings.json ("on" / "off"), or None."""
    from ..errors import AgentCliError
    from ..fsutil import parse_json, read_state

    try:  # never follows a link, never blocks on a FIFO (the settings layers report those)
        raw = read_state(workdir / ".agent-cli" / "settings.json")
        data = parse_json(raw) if raw is not None else None
    except (AgentCliError, OSError, ValueError):
        return None
    value = data.get("worktrees") if isinstance(data, dict) else None
    if isinstance(value, bool):
        return "on" if value else "off"
    return value if value in MODES else None


class Worktrees:
    """The task worktrees of one workdir. `enabled` is False outside git or when off."""

    def __init__(self, workdir: Path, board: TaskBoard | Callable[[], TaskBoard],
                 mode: str | None = None, events=None, mail=None, sandbox=None,
                 co_author: str = "") -> None:
        """`board` may be a function that returns it: read at first use (the banner and a
        fresh repository's set-up need no board)."""
        self.workdir = Path(workdir)
        self.co_author = co_author  # a Co-Authored-By trailer for landing commits, or ""
        self.sandbox = sandbox  # the session's Sandbox: a landing's verify runs inside it
        self._board = board
        self.mode = mode or setting_mode(self.workdir) or "auto"
        if self.mode not in MODES:
            raise UserError(f"worktrees must be one of {', '.join(MODES)}, not {self.mode!r}")
        self.state_dir = self.workdir / ".agent-cli"
        self.dir = self.state_dir / "worktrees"
        self.repo = GitRepo.find(self.workdir) if self.mode != "off" else None
        if self.mode == "on" and self.repo is None:
            raise UserError(f"--worktrees on: {self.workdir} is not in a git repository")
        self.enabled = self.repo is not None
        # the records, the landing journal and stage: inside the git directory, which a
        # clone never carries (private_state.py)
        self.private = PrivateStore(self.workdir)
        self.state = WorktreeState(self.private.path(STATE_NAME))
        # one worktree add/remove/prune at a time (a prune would drop another's half-made one)
        self.lock = StateLock(self.state_dir / "worktrees.lock", timeout=120.0)
        self.snapshots = Snapshots(self.repo, self.private.dir) if self.repo else None
        self.landing = None
        self.remote: str | None = None  # set_remote: task branches pushed, landed elsewhere
        self._sweeper: threading.Thread | None = None
        self._settlers: dict[int, tuple[threading.Thread, threading.Event]] = {}
        self._settle_lock = threading.Lock()  # a settle's swap vs a landing starting
        if self.repo is not None:
            from .landing import Landing

            self.private.ensure()
            self.repo.ensure_excluded(".agent-cli/")
            self.landing = Landing(self, events, mail)
            self.sweep()  # what a run that exited early left in the trash

    def set_remote(self, remote: str) -> None:
        """A teammate on another host: complete_task pushes the task's branch to `remote`
        and the lead's host lands it (team/remote_branches.py)."""
        self.remote = remote

    @property
    def board(self) -> TaskBoard:
        board = self._board
        return board() if callable(board) else board

    # ----- where things are ------------------------------------------------------------
    def banner_line(self) -> str:
        if self.enabled:
            return "teammates work in git worktrees (.agent-cli/worktrees/); tasks land on complete"
        if self.mode == "off":
            return "worktrees off: teammates share the workdir"
        return "not a git repository: teammates share the workdir (no worktrees)"

    def path(self, task_id: int) -> Path:
        return self.dir / f"task-{task_id}"

    def branch(self, task_id: int) -> str:
        return f"{BRANCH_PREFIX}{task_id}"

    def root(self, task_id: int) -> Path:
        """The workdir's place inside the task's worktree (its confinement root)."""
        assert self.repo is not None
        return self.path(task_id) / self.repo.prefix if self.repo.prefix else self.path(task_id)

    def is_ready(self, task_id: int) -> bool:
        """The task has a worktree this host made: a record in the private state and a
        `.git` file naming a git directory of this repository (never a planted one)."""
        rec = self.state.get(task_id) if self.enabled else None
        return bool(rec and rec.get("status") in ("active", "refused", "landing")
                    and self._registered(task_id))

    def _registered(self, task_id: int) -> bool:
        assert self.repo is not None
        dot = self.path(task_id) / ".git"
        try:
            if dot.is_symlink() or not dot.is_file():
                return False
            text = dot.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            return False
        if not text.startswith("gitdir:"):
            return False
        gitdir = Path(os.path.realpath(self.path(task_id) / text[len("gitdir:"):].strip()))
        return gitdir.parent == Path(os.path.realpath(self.repo.common_dir / "worktrees"))

    def workspace_for(self, agent: str) -> Workspace | None:
        """The worktree of the task `agent` holds, or None (the main tree)."""
        if not self.enabled:
            return None
        try:
            held = self.board.held_by(agent)
        except Exception:  # an unreadable board: the tools say so; stay in the main tree
            return None
        if held is None or not self.is_ready(held.id):
            return None
        root = self.root(held.id)
        return Workspace(root, root, f"in task #{held.id}'s worktree", held.id)

    def places(self) -> dict[int, str]:
        """`where` of every task that has a record (one read of the state file)."""
        if not self.enabled:
            return {}
        return {tid: self._where(tid, rec) for tid, rec in self.state.all().items()}

    def where(self, task_id: int) -> str:
        """Where a task lives, for /tasks and `tasks list` ("" when it has no record)."""
        rec = self.state.get(task_id) if self.enabled else None
        return self._where(task_id, rec)

    def _where(self, task_id: int, rec: dict | None) -> str:
        if not rec:
            return ""
        status = rec.get("status")
        if status == "landed":
            files = rec.get("files") or []
            if not files:
                return "landed (no changes)"
            return f"landed ({len(files)} file{'s' if len(files) != 1 else ''})"
        if status == "refused":
            return f"landing refused: {rec.get('detail', '')}"
        if status == "landing":
            return "landing"
        if status == "pushed":
            return rec.get("detail") or "pushed"
        return f"worktree {self.path(task_id).relative_to(self.workdir).as_posix()}"

    # ----- claim -----------------------------------------------------------------------
    def prepare(self, task: Task, owner: str) -> str:
        """Make (or reuse) the task's worktree; the note for the claim text ("" when off).
        A git failure leaves the teammate in the main tree and says so."""
        if not self.enabled:
            return ""
        try:
            with self.lock.held():
                reused = self._ensure(task.id, owner)
        except (GitError, OSError, StorageError) as exc:
            return (f"\n(no worktree for task #{task.id}: {exc}; you work in the shared "
                    "workdir)")
        how = ("continue in its worktree (earlier work is there)" if reused
               else "work in its worktree")
        return (f"\nYou {how}: {self.root(task.id)}. Your file tools and shell work there "
                "(paths relative to it); complete_task lands the change in the main tree.")

    def _ensure(self, task_id: int, owner: str) -> bool:
        """True when an existing worktree is reused."""
        assert self.repo is not None and self.snapshots is not None
        path = self.path(task_id)
        if self.is_ready(task_id):
            self.state.update(task_id, owner=owner)
            return True
        if path.exists() or path.is_symlink():
            self._discard_partial(path)
        self.dir.mkdir(parents=True, exist_ok=True)
        base = self._add(task_id, path)
        self.state.update(task_id, path=path.relative_to(self.workdir).as_posix(),
                          branch=self.branch(task_id), status="active", base=base, owner=owner,
                          detail="")
        self._settle_later(task_id)
        return False

    def _add(self, task_id: int, path: Path) -> str:
        """`git worktree add` of a new branch at a snapshot of the main tree; the commit it
        starts from. The common case costs no other git call: only when the add fails is it
        found out why (the task's branch is there already, its work on it, after its worktree
        was removed; or git still lists a worktree at this path that a killed run left)."""
        assert self.repo is not None and self.snapshots is not None
        branch = self.branch(task_id)
        base = self.snapshots.take()
        try:
            self.repo.run("worktree", "add", "--quiet", "-b", branch, str(path), base)
            return base
        except GitError:
            self._discard_partial(path)  # what the failed add left, and stale registrations
        kept = self.repo.rev(f"refs/heads/{branch}")
        if kept is None:
            self.repo.run("worktree", "add", "--quiet", "-b", branch, str(path), base)
            return base
        self.repo.run("worktree", "add", "--quiet", str(path), branch)
        return kept

    # ----- the new worktree's index ----------------------------------------------------
    def _settle_later(self, task_id: int) -> None:
        """Once the second the checkout wrote the index in has passed, settle the index on
        a daemon thread (a landing starting first cancels it: it does the refresh itself)."""
        assert self.repo is not None
        repo, path, cancel = self.repo, self.path(task_id), threading.Event()

        def run() -> None:
            try:
                written = os.stat(repo.index_path(path)).st_mtime
                if not cancel.wait(max(0.0, int(written) + 1.05 - time.time())):
                    repo.settle_index(path, lambda: self._swap_allowed(cancel))
            except (GitError, OSError):  # the worktree went away: nothing to settle
                pass

        thread = threading.Thread(target=run, name=f"worktree-settle-{task_id}", daemon=True)
        with self._settle_lock:
            self._settlers[task_id] = (thread, cancel)
        thread.start()

    @contextmanager
    def _swap_allowed(self, cancel: threading.Event) -> Iterator[bool]:
        """True while no landing runs, in this process (cancel) or another (its lock)."""
        with self._settle_lock, ExitStack() as stack:
            allowed = not cancel.is_set() and self.landing is not None
            if allowed:
                try:
                    stack.enter_context(StateLock(self.landing.lock.path, timeout=0).held())
                except StorageError:
                    allowed = False
            yield allowed

    def stop_settling(self, task_id: int) -> None:
        """No settle of the task's index from now on (the landing is about to start)."""
        with self._settle_lock:
            entry = self._settlers.pop(task_id, None)
            if entry is not None:
                entry[1].set()

    def wait_settled(self, task_id: int, timeout: float) -> bool:
        """Wait for the task's index settle to end (benchmarks, tests); False on timeout."""
        with self._settle_lock:
            entry = self._settlers.get(task_id)
        if entry is None:
            return True
        entry[0].join(timeout)
        return not entry[0].is_alive()

    def _discard_partial(self, path: Path) -> None:
        """A worktree directory never finished (a killed `worktree add`): it holds no work."""
        assert self.repo is not None
        if path.exists() or path.is_symlink():
            if path.is_symlink() or not path.is_dir():
                raise GitError(f"{path} is in the way (not a worktree directory)")
            shutil.rmtree(path)
        self.repo.run("worktree", "prune")

    # ----- after landing ---------------------------------------------------------------
    def remove(self, task_id: int, drop_branch: bool = False) -> None:
        """Remove a landed task's worktree; its branch stays unless `drop_branch`."""
        assert self.repo is not None
        with self.lock.held():
            self._remove(task_id)
            if drop_branch and self.repo.rev(f"refs/heads/{self.branch(task_id)}"):
                self.repo.run("branch", "-D", "-q", self.branch(task_id))

    def _remove(self, task_id: int) -> None:
        """Move the directory into .agent-cli/trash/ (one rename, however many files),
        let git forget the worktree, and delete the files on a background thread."""
        assert self.repo is not None
        path = self.path(task_id)
        if path.exists() or path.is_symlink():
            trash = self.state_dir / "trash" / f"task-{task_id}-{uuid.uuid4().hex[:8]}"
            trash.parent.mkdir(parents=True, exist_ok=True)
            os.rename(path, trash)
        self.repo.run("worktree", "prune")
        self.sweep()

    def sweep(self) -> None:
        """Delete what is in .agent-cli/trash/ on a daemon thread (a run that exits first
        leaves the rest to the next one)."""
        trash = self.state_dir / "trash"
        if not trash.is_dir() or (self._sweeper is not None and self._sweeper.is_alive()):
            return

        def run() -> None:
            try:
                while entries := list(trash.iterdir()):
                    for entry in entries:
                        shutil.rmtree(entry, ignore_errors=True)
                        if entry.exists():  # undeletable: leave it, do not spin
                            return
            except OSError:  # the trash (or the whole workdir) went away
                return

        self._sweeper = threading.Thread(target=run, name="worktree-sweep", daemon=True)
        self._sweeper.start()

    def result_note(self, task_id: int) -> str:
        """" (files changed: a.py, b.py)" for the lead's result message, "" when none."""
        rec = self.state.get(task_id) if self.enabled else None
        if rec and rec.get("status") == "pushed":
            return (f" ({rec.get('detail', 'pushed')}: the lead's session lands it when "
                    f"this result arrives; else `agent-cli tasks land {task_id}`)")
        if not rec or rec.get("status") != "landed":
            return ""
        files = rec.get("files") or []
        if not files:
            return " (no files changed)"
        shown = ", ".join(files[:20]) + (f" and {len(files) - 20} more" if len(files) > 20 else "")
        return f" (files changed: {shown})"
