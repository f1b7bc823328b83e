"""Landing: complete_task of a task that lives in a worktree, one task at a time.

Under the landing lock (`landing.lock`, across processes: a merge queue):
1. commit the worktree's changes on `agent-cli/task-<id>` (author: the teammate);
2. merge a fresh snapshot of the main tree into the branch (git merge, 3-way); a conflict
   refuses completion, naming the files; the markers stay in the worktree to resolve;
3. run the task's verify in the worktree on that merged state;
4. apply base..merged to the main working tree (tree_apply.py); when the main tree changed
   the same lines meanwhile, back to 2.
Then the board completes the task, the worktree is removed, the branch kept (for `tasks
diff`) unless the landing changed nothing: then it is deleted too. Each step is journaled in
`landing.json`: a run killed before step 4 leaves the main tree untouched (the next landing
or start-up clears the leftovers); killed during step 4, the next one finishes it from the
journal (landed, never a mix). The lock, journal and stage are host-private
(private_state.py: in the git directory, which a clone never carries); a journal that is not
this user's regular file, or names a path that is not a plain relative one, is set aside
and reported, and nothing it names is touched.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import Refused, StorageError, ToolError
from ..events import MessageEvent
from ..gitrepo import GitError
from ..locking import StateLock
from .snapshot import add_all
from .tree_apply import TreeApply

if TYPE_CHECKING:
    from ..board.models import Task
    from .worktrees import Worktrees

MAX_ROUNDS = 5
JOURNAL = "landing.json"
_STEPS = ("commit", "merge", "apply", "applied")
LANDING_LOCK_TIMEOUT_S = 900.0  # a landing can wait for another one's verify


class LandingRefused(ToolError):
    """Completion refused by the landing (conflict, markers left, verify failed)."""


@dataclass
class Landed:
    files: list[str]
    unblocked: list[int] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # changed by the user meanwhile
    note: str = ""


class Landing:
    def __init__(self, wt: Worktrees, events: Any = None, mail: Any = None) -> None:
        assert wt.repo is not None and wt.snapshots is not None
        self.wt = wt
        self.repo = wt.repo
        self.events = events
        self.mail = mail  # a Mailbox, a function that returns it (read at first use), or None
        self.store = wt.private
        self.lock = StateLock(self.store.path("landing.lock"), timeout=LANDING_LOCK_TIMEOUT_S)
        self.journal = self.store.path(JOURNAL)
        self.apply = TreeApply(wt.repo, wt.snapshots, self.store.dir)
        self.on_step: Callable[[str], None] | None = None  # tests: a kill point per step

    # ----- the queue -------------------------------------------------------------------
    def land(self, task: Task, owner: str, token: str, result: str,
             cancel: threading.Event | None = None, pushed: str | None = None) -> Landed:
        """Steps 1-4 and the board completion; LandingRefused / ToolError leave the task in
        progress with its owner. `pushed`: the commit of a task completed on another host
        (remote_branches.land_pushed): the same steps, the board already says completed."""
        with self.lock.held():
            self._resume_locked()
            job = {"task": task.id, "owner": owner, "token": token, "result": result,
                   "subject": task.subject, "step": "commit", "pid": os.getpid()}
            if pushed is not None:
                job["pushed"] = pushed
            self._write(job)
            try:
                self.wt.stop_settling(task.id)  # step 1 refreshes the worktree's index itself
                self.wt.state.update(task.id, status="landing")
                self._step("commit")
                head, base = self._commit_and_snapshot(task, owner)
                return self._rounds(task, job, head, base, cancel)
            except BaseException:
                if job["step"] not in ("apply", "applied"):
                    self._drop()
                    rec = self.wt.state.get(task.id) or {}
                    if rec.get("status") == "landing":
                        self.wt.state.update(task.id, status="active")
                raise

    def _rounds(self, task: Task, job: dict, head: str | None, base: str | None,
                cancel: threading.Event | None) -> Landed:
        for _ in range(MAX_ROUNDS):
            base = base or self.wt.snapshots.take()
            self._step("merge")
            if not self._holds(task, base):
                job["step"] = "merge"  # (a run killed merging aborts the merge: leftovers)
                self._write(job)
                self._merge(task, base)
                head = None
            if task.verify is not None:
                self._step("verify")
                self._verify(task, cancel)
                head = None  # what lands is what was verified
            merged = head = head or self.repo.out("rev-parse", "HEAD", cwd=self.wt.path(task.id))
            plan = self.apply.plan(base, merged)
            if plan is None:
                base = None
                continue  # the main tree changed the same lines since step 2
            self.apply.check_paths(plan.files)
            self._check_holder(task.id, job["owner"], job["token"], "pushed" in job)
            self.apply.stage_files(plan.files)
            job.update(step="apply", files=plan.files, base=base, merged=merged)
            self._write(job)
            self._step("apply")
            job["skipped"] = self.apply.finish(plan.files, on_file=self._file_step)
            return self._conclude(job, tell_lead=False)
        raise self._refuse(task.id, "the main tree kept changing the same lines",
                           "the main tree kept changing the same lines while landing; call "
                           "complete_task again")

    # ----- steps -----------------------------------------------------------------------
    def _commit_and_snapshot(self, task: Task, owner: str) -> tuple[str | None, str]:
        """Step 1, and meanwhile the main tree's snapshot step 2 merges (two independent
        `git add -A`, one per tree, at once)."""
        with ThreadPoolExecutor(1, thread_name_prefix="landing-snapshot") as pool:
            snapshot = pool.submit(self.wt.snapshots.take)
            head = self._commit(task, owner)
            return head, snapshot.result()

    def _commit(self, task: Task, owner: str) -> str | None:
        """The branch's HEAD after committing the worktree's changes (None: ask git)."""
        wt = self.wt.path(task.id)
        add_all(self.repo, wt)
        merging = self._merging(wt)
        if merging:
            marked = self._markers(wt)
            if marked:
                raise self._refuse(
                    task.id, f"conflict markers left in {', '.join(marked)}",
                    f"task #{task.id} not completed: {', '.join(marked)} still hold conflict "
                    "markers (<<<<<<< ======= >>>>>>>). Edit them in your worktree to keep both "
                    "sides as intended, remove the markers, then call complete_task again.")
        author = {"GIT_AUTHOR_NAME": owner, "GIT_AUTHOR_EMAIL": f"{owner}@agent-cli.local"}
        subject = f"task #{task.id}: {task.subject}"
        if merging:  # git commit concludes the merge the teammate resolved
            subject += " (conflict with the main tree resolved)"
        if getattr(self.wt, "co_author", ""):  # includeCoAuthoredBy, as Claude Code adds it
            subject += f"\n\nCo-Authored-By: {self.wt.co_author}"
        if merging:
            self.repo.run("commit", "-q", "--no-verify", "-m", subject, cwd=wt, env=author)
            return None
        tree = self.repo.out("write-tree", cwd=wt)
        head, head_tree = self.repo.out("rev-parse", "HEAD", "HEAD^{tree}", cwd=wt).split()
        if tree == head_tree:
            return head  # nothing new since the last commit
        commit = self.repo.out("commit-tree", tree, "-p", head, "-m", subject, env=author)
        self.repo.run("update-ref", "-m", "agent-cli: task commit", "HEAD", commit, head, cwd=wt)
        return commit

    def _merging(self, wt: Path) -> bool:
        """A merge in progress in the worktree (its MERGE_HEAD; no git process needed)."""
        text = (wt / ".git").read_text(encoding="utf-8").strip()
        gitdir = Path(text.split(":", 1)[1].strip()) if text.startswith("gitdir:") else None
        if gitdir is None:
            return self.repo.run("rev-parse", "-q", "--verify", "MERGE_HEAD", cwd=wt,
                                 check=False).returncode == 0
        return (gitdir if gitdir.is_absolute() else wt / gitdir).joinpath("MERGE_HEAD").exists()

    def _markers(self, wt: Path) -> list[str]:
        out = self.repo.run("diff", "--cached", "--check", cwd=wt, check=False).stdout
        found = []
        for line in out.splitlines():
            if line.endswith("leftover conflict marker"):
                path = self._shown(line.rsplit(":", 2)[0])
                if path not in found:
                    found.append(path)
        return found

    def _holds(self, task: Task, base: str) -> bool:
        """The branch already holds this main tree (nothing to merge)."""
        return self.repo.run("merge-base", "--is-ancestor", base, "HEAD", cwd=self.wt.path(
            task.id), check=False).returncode == 0

    def _merge(self, task: Task, base: str) -> None:
        wt = self.wt.path(task.id)
        proc = self.repo.run("merge", "--no-edit", "-m", f"task #{task.id}: merge the main tree",
                             base, cwd=wt, check=False)
        if proc.returncode == 0:
            return
        conflicted = [self._shown(p) for p in self.repo.out(
            "diff", "--name-only", "--diff-filter=U", cwd=wt).splitlines() if p]
        if not conflicted:
            raise GitError(f"git merge failed: {(proc.stderr or proc.stdout).strip()[:300]}")
        names = ", ".join(conflicted)
        raise self._refuse(
            task.id, f"conflict in {names}",
            f"task #{task.id} not completed: the main tree changed the same lines or files; "
            f"merging it into your worktree conflicts in {names}. Those files in your worktree "
            "now hold conflict markers (<<<<<<< your side, ======= then the main tree's "
            "side, >>>>>>>). Edit them to keep both changes as intended, remove the markers, "
            "then call complete_task again. The task stays in_progress with you.")

    def _verify(self, task: Task, cancel: threading.Event | None) -> None:
        from .verify import check_verify

        assert task.verify is not None
        outcome = check_verify(task.verify, self.wt.root(task.id), cancel,
                               sandbox=getattr(self.wt, "sandbox", None))
        if outcome.passed:
            return
        self.wt.board.verify_failed(task, self._owner(task), outcome.detail)
        raise self._refuse(
            task.id, f"verify failed on the merged state: {outcome.detail}",
            f"task #{task.id} not completed: {outcome.detail} (verify ran in your worktree with "
            "the current main tree merged in). It stays in_progress with you; fix the cause and "
            "call complete_task again.")

    def _check_holder(self, task_id: int, owner: str, token: str, pushed: bool = False) -> None:
        task = self.wt.board.get(task_id)
        if pushed:  # completed on another host: still completed by that owner
            if task.status != "completed" or task.owner != owner:
                raise Refused(f"task {task_id} is no longer completed by {owner} "
                              f"({task.status}); nothing landed")
            return
        if task.status != "in_progress" or task.owner != owner or task.claim_token != token:
            raise Refused(f"task {task_id} is no longer yours to complete ({task.status}, "
                          f"owner {task.owner or '-'}); nothing landed")

    # ----- conclusion and recovery -----------------------------------------------------
    def _conclude(self, job: dict, tell_lead: bool) -> Landed:
        """The main tree holds the change: complete on the board, record, clean up."""
        job["step"] = "applied"
        self._write(job)
        tid = job["task"]
        files = [f["path"] for f in job.get("files", [])]
        shown = [self._shown(p) for p in files]
        # a landing that changes nothing keeps no branch: its record diffs base..base
        merged = job.get("merged") if files else job.get("base")
        self.wt.state.update(tid, status="landed", files=shown, base=job.get("base"),
                             merged=merged, detail="")
        landed = Landed(shown, skipped=[self._shown(p) for p in job.get("skipped", [])])
        try:
            done = self.wt.board.complete(tid, job["owner"], job["token"], job["result"],
                                          actor=job["owner"])
            landed.unblocked = list(done.unblocked)
        except Refused as exc:
            task = self.wt.board.get(tid)
            if task.status != "completed" or task.owner != job["owner"]:  # else: done before
                landed.note = f"the change landed but the board refused the completion: {exc}"
        self._step("complete")
        # before the journal goes: a kill is resumed
        problem = self._remove_worktree(tid, drop_branch=not files)
        self._drop()
        if problem:
            landed.note = (landed.note + "; " if landed.note else "") + problem
        if tell_lead:
            self._tell_lead(job, landed)
        return landed

    def _remove_worktree(self, tid: int, drop_branch: bool) -> str:
        """Remove a landed task's worktree (and its branch when the landing changed
        nothing); "" or why it was kept (doctor lists the leftover)."""
        try:
            self.wt.remove(tid, drop_branch=drop_branch)
        except (GitError, OSError) as exc:  # the change is landed either way
            return f"worktree kept: {exc}"
        return ""

    def resume(self) -> Landed | None:
        """Finish or clear a landing a killed process left (no-op while another runs one)."""
        if not self.journal.exists():
            return None
        probe = StateLock(self.lock.path, timeout=0.2)
        try:
            with probe.held():
                return self._resume_locked()
        except StorageError:
            return None  # another process is landing right now; it will finish it

    def _resume_locked(self) -> Landed | None:
        job = self._read()
        if job is None:
            return None
        tid = job.get("task")
        if job.get("step") == "apply":
            job["skipped"] = self.apply.finish(job.get("files", []))
        if job.get("step") in ("apply", "applied"):
            return self._conclude(job, tell_lead=True)
        self._clear_leftovers(tid, job.get("step"))
        self._drop()
        return None

    def _clear_leftovers(self, tid: int, step: str | None) -> None:
        """Nothing reached the main tree: remove the killed git's locks, abort its merge."""
        wt = self.wt.path(tid) if isinstance(tid, int) else None
        if wt is None or not (wt / ".git").is_file():
            return
        gitdir = Path(self.repo.out("rev-parse", "--absolute-git-dir", cwd=wt))
        for name in ("index.lock", "HEAD.lock", "MERGE_HEAD.lock"):
            (gitdir / name).unlink(missing_ok=True)
        ref_lock = self.repo.common_dir / "refs" / "heads" / f"{self.wt.branch(tid)}.lock"
        ref_lock.unlink(missing_ok=True)
        if step == "merge" and self._merging(wt):
            self.repo.run("merge", "--abort", cwd=wt, check=False)
        rec = self.wt.state.get(tid) or {}
        if rec.get("status") == "landing":
            self.wt.state.update(tid, status="active")

    def _tell_lead(self, job: dict, landed: Landed) -> None:
        if self.mail is None:
            return
        from ..names import LEAD

        tid, owner = job["task"], job["owner"]
        content = (f"task #{tid} ({job.get('subject', '')}) completed: {job['result']}"
                   f"{self.wt.result_note(tid)} [landing finished after a restart]")
        mail = self.mail() if callable(self.mail) else self.mail
        try:
            mail.send(owner, LEAD, content, type="result")
        except (OSError, StorageError):
            return
        if self.events is not None:
            self.events.emit(MessageEvent(agent=owner, to=LEAD, msg_type="result",
                                          preview=content[:120]))

    # ----- helpers ---------------------------------------------------------------------
    def _refuse(self, tid: int, detail: str, message: str) -> LandingRefused:
        self.wt.state.update(tid, status="refused", detail=detail)
        return LandingRefused(message)

    def _shown(self, repo_path: str) -> str:
        prefix = self.repo.prefix
        return repo_path[len(prefix):] if prefix and repo_path.startswith(prefix) else repo_path

    def _owner(self, task: Task) -> str:
        return task.owner or ""

    def _step(self, name: str) -> None:
        if self.on_step is not None:
            self.on_step(name)

    def _file_step(self, path: str) -> None:
        self._step(f"file:{path}")

    def _write(self, job: dict) -> None:
        self.store.write(JOURNAL, job)

    def _read(self) -> dict | None:
        """The journal when it is this user's and well formed; else set aside, reported."""
        job = self.store.read(JOURNAL)
        if not job:
            return None
        why = journal_problem(job)
        if why is None:
            return job
        from ..fsutil import set_aside

        moved = set_aside(self.journal, "unusable")
        self.store.warn(f"{self.journal}: {why}; not trusted, nothing it names was touched"
                        + (f" (set aside as {moved.name})" if moved is not None else ""))
        return None

    def _drop(self) -> None:
        self.journal.unlink(missing_ok=True)


def journal_problem(job: dict) -> str | None:
    """Why a landing journal cannot be acted on (None: it can)."""
    from ..relpaths import UnsafePath, check_relpath

    if not isinstance(job.get("task"), int) or job.get("step") not in _STEPS:
        return "not a landing journal (task, step)"
    if not all(isinstance(job.get(k), str) for k in ("owner", "token", "result")):
        return "not a landing journal (owner, token, result)"
    files = job.get("files", [])
    if not isinstance(files, list):
        return "its files are not a list"
    for f in files:
        if not isinstance(f, dict):
            return "a file entry is not an object"
        try:
            check_relpath(f.get("path"))
        except UnsafePath as exc:
            return str(exc)
        for side in ("pre", "post"):
            pair = f.get(side)
            if pair is not None and not (isinstance(pair, list) and len(pair) == 2
                                         and all(isinstance(x, str) for x in pair)):
                return f"entry {f['path']!r} has a bad {side!r}"
    return None
