"""Task branches between hosts: pushed by a teammate on another host, fetched by the lead's.

A teammate started with `--remote NAME` completes a worktree task by handing it off
(`hand_off`): its worktree committed on `agent-cli/task-<id>` (under the landing lock, as a
landing's step 1), the task's verify run there, the commit pushed to the remote as that
branch, then the board completion, whose result ends with the record
`[pushed agent-cli/task-<id> <commit> to NAME]`. The lead's host lands it (`land_pushed`):
the branch fetched from its own remote when it is not local, its tip checked against the
recorded commit, then the same landing as a local task (merge with the current tree, verify
on the merged state, apply without touching the user's other changes). A branch that cannot
be fetched, or that moved since the push, is refused with the reason, and nothing lands.

Host git hardening stays on for both (gitrepo.HARDENING): only the file, ssh and https
transports are opened, ssh is the system's `ssh` (never a configured command), and the
remote's upload/receive programs are git's own.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import AgentCliError, Refused, ToolError
from ..gitrepo import GitError
from .landing import Landed, LandingRefused

if TYPE_CHECKING:
    from ..board.models import Task
    from ..gitrepo import GitRepo
    from ..runtime import Runtime
    from .worktrees import Worktrees

TRANSPORTS = ("file", "ssh", "https")
RECORD_RE = re.compile(r"\[pushed (agent-cli/task-(\d+)) ([0-9a-f]{40}) to ([A-Za-z0-9._-]+)\]\Z")


@dataclass(frozen=True)
class Pushed:
    """What a completion records of its pushed branch."""

    branch: str
    task_id: int
    commit: str
    remote: str

    def record(self) -> str:
        return f"[pushed {self.branch} {self.commit} to {self.remote}]"


def pushed_of(task: Task) -> Pushed | None:
    """The push record at the end of a completed task's result (None: none, or not its own)."""
    found = RECORD_RE.search((task.result or "").rstrip())
    if found is None or int(found.group(2)) != task.id:
        return None
    return Pushed(found.group(1), task.id, found.group(3), found.group(4))


def transport() -> tuple[str, ...]:
    """The `-c` options that open the file, ssh and https transports for one command."""
    items = [f"protocol.{name}.allow=always" for name in TRANSPORTS] + ["core.sshCommand=ssh"]
    return tuple(arg for item in items for arg in ("-c", item))


# the remote's programs are git's own, whatever remote.<name>.uploadpack / receivepack say
UPLOAD = "--upload-pack=git-upload-pack"
RECEIVE = "--receive-pack=git-receive-pack"


def push(repo: GitRepo, remote: str, branch: str, commit: str) -> None:
    """`commit` to `remote` as refs/heads/`branch` (never forced); GitError says why not."""
    proc = repo.run(*transport(), "push", "--quiet", "--no-verify", RECEIVE, remote,
                    f"{commit}:refs/heads/{branch}", check=False)
    if proc.returncode != 0:
        raise GitError(f"git push to {remote} failed: {_first(proc.stderr or proc.stdout)}")


def unpush(repo: GitRepo, remote: str, branch: str, commit: str) -> None:
    """Delete refs/heads/`branch` of `remote` if it is still `commit` (best effort)."""
    repo.run(*transport(), "push", "--quiet", "--no-verify", RECEIVE,
             f"--force-with-lease=refs/heads/{branch}:{commit}", remote,
             f":refs/heads/{branch}", check=False)


def fetch(repo: GitRepo, remote: str, branch: str) -> None:
    """refs/heads/`branch` of `remote` into the local branch of that name (never forced)."""
    proc = repo.run(*transport(), "fetch", "--quiet", "--no-tags", UPLOAD,
                    "--no-recurse-submodules", remote,
                    f"refs/heads/{branch}:refs/heads/{branch}", check=False)
    if proc.returncode != 0:
        raise GitError(f"cannot fetch {branch} from {remote}: {_first(proc.stderr or proc.stdout)}")


def _first(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return "; ".join(lines[:2])[:300] or "git gave no reason"


def hand_off(wt: Worktrees, task: Task, owner: str, token: str, result: str, remote: str,
             cancel: threading.Event | None = None) -> Pushed:
    """Commit the task's worktree, verify it there, push it, complete the task with the
    record. ToolError / Refused leave the task in progress with its owner."""
    from .verify import check_verify

    landing = wt.landing
    assert wt.repo is not None and landing is not None
    with landing.lock.held():
        wt.stop_settling(task.id)
        head = landing._commit(task, owner) or wt.repo.out(
            "rev-parse", "HEAD", cwd=wt.path(task.id))
        if task.verify is not None:
            outcome = check_verify(task.verify, wt.root(task.id), cancel, sandbox=wt.sandbox)
            if not outcome.passed:
                wt.board.verify_failed(task, owner, outcome.detail)
                raise ToolError(f"task #{task.id} not completed: {outcome.detail} (verify ran "
                                "in your worktree). It stays in_progress with you.")
        pushed = Pushed(wt.branch(task.id), task.id, head, remote)
        landing._check_holder(task.id, owner, token)  # a lost claim pushes nothing
        try:
            push(wt.repo, remote, pushed.branch, head)
        except GitError as exc:
            wt.state.update(task.id, status="refused", detail=str(exc))
            raise ToolError(f"task #{task.id} not completed: {exc}. It stays in_progress "
                            "with you; the lead is not told until it is pushed.") from None
        text = (result.rstrip() + " " if result.strip() else "") + pushed.record()
        try:
            wt.board.complete(task.id, owner, token, text, actor=owner)
        except Refused:  # the claim was lost meanwhile: the next claimer pushes its own
            unpush(wt.repo, remote, pushed.branch, head)
            raise
        wt.state.update(task.id, status="pushed", merged=head, detail=f"pushed to {remote}")
    problem = _remove(wt, task.id)
    if problem:
        wt.state.update(task.id, detail=f"pushed to {remote}; {problem}")
    return pushed


def _remove(wt: Worktrees, task_id: int) -> str:
    try:
        wt.remove(task_id)
    except (GitError, OSError) as exc:
        return f"worktree kept: {exc}"
    return ""


def land_pushed(wt: Worktrees, task: Task, remote: str | None = None,
                cancel: threading.Event | None = None) -> Landed:
    """The lead's landing of a task completed on another host (see the module docstring),
    fetched from `remote` (None: the one its record names); LandingRefused says why
    nothing landed."""
    assert wt.repo is not None and wt.landing is not None
    if task.status != "completed":
        raise Refused(f"task #{task.id} is {task.status}: only a completed task's pushed "
                      "branch is landed here")
    pushed = pushed_of(task)
    if pushed is None:
        raise Refused(f"task #{task.id} records no pushed branch in its result")
    rec = wt.state.get(task.id) or {}
    if rec.get("status") == "landed":
        raise Refused(f"task #{task.id} has already landed here")
    remote = remote or pushed.remote
    local = wt.repo.rev(f"refs/heads/{pushed.branch}")
    if local is not None and local != pushed.commit:
        raise _refuse(wt, task.id, f"a local branch {pushed.branch} at {local[:12]} (an "
                      f"earlier attempt on this host) is in the way of the pushed commit "
                      f"{pushed.commit[:12]}; `git branch -D {pushed.branch}`, then land again")
    if local is None:
        try:
            fetch(wt.repo, remote, pushed.branch)
        except GitError as exc:
            raise _refuse(wt, task.id, str(exc)) from None
        local = wt.repo.rev(f"refs/heads/{pushed.branch}")
        if local != pushed.commit:
            wt.repo.run("branch", "-D", "-q", pushed.branch, check=False)  # not what was pushed
            raise _refuse(wt, task.id, f"{pushed.branch} on {remote} is at {str(local)[:12]}, "
                          f"not the pushed commit {pushed.commit[:12]}: nothing landed")
    owner = task.owner or "teammate"
    with wt.lock.held():
        wt._ensure(task.id, owner)
    return wt.landing.land(task, owner, task.claim_token or "", task.result or "", cancel,
                           pushed=pushed.commit)


def _refuse(wt: Worktrees, task_id: int, detail: str) -> LandingRefused:
    wt.state.update(task_id, status="refused", detail=detail)
    return LandingRefused(f"task #{task_id} not landed: {detail}")


def land_arrivals(rt: Runtime, cancel: threading.Event | None = None) -> list[str]:
    """The lead's session, when a result comes in: land every completed task with a push
    record that has neither landed nor been refused here; one line each for the lead. A
    model-written verify is asked about through the lead's gate first, as for a local task."""
    try:
        wt = rt.worktrees
        tasks = rt.board.snapshot().tasks
    except AgentCliError:  # no worktrees here (`--worktrees on` outside git), or no board
        return []
    if not wt.enabled or wt.landing is None or wt.remote is not None:
        return []
    lines = []
    for task in tasks:
        pushed = pushed_of(task) if task.status == "completed" else None
        if pushed is None or (wt.state.get(task.id) or {}).get("status") in ("landed",
                                                                             "refused"):
            continue
        lines.append(_land_arrival(rt, wt, task, pushed, cancel or threading.Event()))
    return lines


def _land_arrival(rt: Runtime, wt: Worktrees, task: Task, pushed: Pushed,
                  cancel: threading.Event) -> str:
    from ..names import LEAD
    from ..tools.base import ToolContext
    from .verify import ask_verify

    head = f"task #{task.id} ({task.subject}), pushed by {task.owner} to {pushed.remote}"
    retry = f"; `agent-cli tasks land {task.id}` lands it once that is fixed"
    if task.verify is not None:
        refused = ask_verify(rt, task, ToolContext(LEAD, rt.workdir, "lead", cancel))
        if refused is not None:
            wt.state.update(task.id, status="refused", detail=refused.detail)
            return f"{head}, did not land: {refused.detail}{retry}"
    try:
        landed = land_pushed(wt, task, pushed.remote, cancel)
    except AgentCliError as exc:  # a refusal, git, the board
        return f"{head}, did not land: {str(exc).splitlines()[0]}{retry}"
    files = ", ".join(landed.files) or "no files changed"
    kept = f"; left alone (changed here meanwhile): {', '.join(landed.skipped)}" \
        if landed.skipped else ""
    return f"{head}, landed in the main tree: {files}{kept}"
