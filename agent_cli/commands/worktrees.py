"""`agent-cli tasks diff ID`, `tasks clean-worktrees [--force] [--branches]`, and the
worktree part of `tasks doctor` and `tasks list`."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from ..errors import UserError

if TYPE_CHECKING:
    from ..team.worktrees import Worktrees


def add_parsers(acts: Any, parent: argparse.ArgumentParser) -> None:
    p = acts.add_parser("diff", parents=[parent],
                        help="the change of a task's worktree or branch, as a patch")
    p.add_argument("id", type=int)
    p.set_defaults(handler=cmd_diff)
    p = acts.add_parser(
        "clean-worktrees", parents=[parent],
        help="remove stale task worktrees (never one with unlanded work without --force)")
    p.add_argument("--force", action="store_true",
                   help="also remove stale worktrees and branches holding unlanded work")
    p.add_argument("--branches", action="store_true",
                   help="also delete stale agent-cli/task-* branches (landed ones included)")
    p.set_defaults(handler=cmd_clean)
    p = acts.add_parser(
        "land", parents=[parent],
        help="land a task completed on another host: fetch its pushed branch, merge, verify, "
        "apply")
    p.add_argument("id", type=int)
    p.add_argument("--remote", default=None, metavar="NAME",
                   help="the git remote to fetch its branch from (default: the one the "
                   "teammate pushed to, as its completion records)")
    p.add_argument("--run-verify", action="store_true",
                   help="run the task's verify even when a model wrote it (else asked)")
    p.set_defaults(handler=cmd_land)


def worktrees_of(args: argparse.Namespace) -> Worktrees:
    from ..team.worktrees import Worktrees
    from .workdir import stores_of, workdir_of

    return Worktrees(workdir_of(args), stores_of(args).board)


def cmd_diff(args: argparse.Namespace) -> int:
    from ..team.worktree_inventory import diff_of

    text = diff_of(worktrees_of(args), args.id)
    print(text if text else f"task #{args.id} changes nothing")
    return 0


def doctor_lines(args: argparse.Namespace) -> list[str]:
    """One line per task worktree or branch that is stale or holds unlanded work."""
    from ..team.worktree_inventory import inventory

    try:
        wt = worktrees_of(args)
    except UserError as exc:
        return [f"worktrees: {exc}"]
    lines = []
    for e in inventory(wt):
        if not e.stale and not e.unlanded:
            continue
        tags = [t for t, on in (("stale", e.stale), ("unlanded work", e.unlanded)) if on]
        lines.append(f"{e.kind} {e.name} (task #{e.task_id}): {e.why} [{', '.join(tags)}]")
    if any(e.stale for e in inventory(wt)):
        lines.append("remove stale ones with `agent-cli tasks clean-worktrees` "
                     "(--branches for branches, --force for unlanded work)")
    return lines


def cmd_clean(args: argparse.Namespace) -> int:
    from ..team.worktree_inventory import inventory

    wt = worktrees_of(args)
    if not wt.enabled or wt.repo is None:
        print("worktrees are not in use here: nothing to clean")
        return 0
    removed = kept = 0
    for e in inventory(wt):
        if not e.stale or (e.kind == "branch" and not args.branches):
            continue
        if e.unlanded and not args.force:
            print(f"kept {e.kind} {e.name}: it holds unlanded work (--force removes it)")
            kept += 1
            continue
        if e.kind == "worktree":
            wt.remove(e.task_id)
        else:
            wt.repo.run("branch", "-D", "-q", e.name)
        print(f"removed {e.kind} {e.name} ({_was(e)})")
        removed += 1
    print(f"{removed} removed, {kept} kept")
    return 0


def _was(entry: Any) -> str:
    """Why a removed worktree or branch was there, said in the past."""
    if entry.kind == "branch" and entry.why.startswith("landed"):
        return "its task landed; it was kept for `agent-cli tasks diff`"
    return entry.why


def where_of(args: argparse.Namespace) -> Any:
    """`task id -> where it lives` for `tasks list` (a no-op outside git)."""
    try:
        wt = worktrees_of(args)
    except UserError:
        return lambda task_id: ""
    places = wt.places()
    return lambda task_id: places.get(task_id, "")


def land_from_cli(args: argparse.Namespace, task: Any, token: str) -> bool:
    """`tasks complete` of a task that lives in a worktree: land it (its verify runs in the
    worktree on the merged state, after the same approval as outside a worktree: a verify a
    model wrote is shown and asked about, or needs --run-verify). False when it has no
    worktree."""
    from ..errors import Refused, ToolError
    from ..gitrepo import GitError

    try:
        wt = worktrees_of(args)
    except UserError:
        return False
    if not wt.enabled or wt.landing is None or not wt.is_ready(task.id):
        return False
    if task.verify is not None:
        from .verify_cli import approve_cli_verify

        approve_cli_verify(task, wt.workdir, getattr(args, "run_verify", False),
                           wt.board.file_of(task.id))
    print(f"landing task #{task.id} from {wt.path(task.id).relative_to(wt.workdir)}", flush=True)
    try:
        landed = wt.landing.land(task, args.owner, token, args.result)
    except (ToolError, GitError) as exc:
        raise Refused(str(exc)) from None
    print(f"#{task.id} completed by {args.owner}; landed: {', '.join(landed.files) or 'no files'}")
    if landed.note:
        print(f"note: {landed.note}")
    if landed.unblocked:
        print("now claimable: " + ", ".join(f"#{i}" for i in landed.unblocked))
    return True


def cmd_land(args: argparse.Namespace) -> int:
    """`tasks land ID`: the lead's host lands a task a teammate elsewhere pushed."""
    from ..errors import Refused, ToolError
    from ..gitrepo import GitError
    from ..team.remote_branches import land_pushed
    from .teammate import check_remote

    remote = check_remote(args.remote) if args.remote is not None else None
    wt = worktrees_of(args)
    if not wt.enabled or wt.landing is None:
        raise UserError(f"{wt.workdir} is not in a git repository with worktrees on: "
                        "nothing can land here")
    task = wt.board.get(args.id)
    if task.verify is not None:
        from .verify_cli import approve_cli_verify

        approve_cli_verify(task, wt.workdir, getattr(args, "run_verify", False))
    try:
        landed = land_pushed(wt, task, remote)
    except (ToolError, GitError) as exc:
        raise Refused(str(exc)) from None
    print(f"#{task.id} landed: {', '.join(landed.files) or 'no files'}")
    if landed.skipped:
        print("left alone (changed here meanwhile): " + ", ".join(landed.skipped))
    if landed.note:
        print(f"note: {landed.note}")
    return 0
