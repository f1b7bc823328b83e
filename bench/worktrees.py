"""Benchmark of task worktrees on a generated repository of 10,000 files.

    python bench/worktrees.py [--json] [--files N] [--runs N] [--dir DIR]

(--dir: where the repository is generated, e.g. /dev/shm to leave the disk out of it.)

The generated repository is committed, then left until the next second and `git status` run
once, as a user's own git would (its index was written in the second its last files were,
so until then git re-reads those files in every command: "racy git"; a user's repository
is not in that state for long).

git_worktree_add_ms   plain `git worktree add -b BRANCH PATH HEAD` (median): the floor, one
                      sample next to each claim run (the load drifts during a run).
worktree_create_ms    claim to ready: board.claim + Worktrees.prepare, i.e. a snapshot of the
                      main tree (one uncommitted edit and one untracked file in it, changed
                      before every run so no snapshot is reused) + `git worktree add` (median).
                      Target: <= 1.5 x git_worktree_add_ms (shown as create_vs_floor).
snapshot_ms           the snapshot alone, main tree changed (median), for scale.
settle_cpu_ms         the new worktree's index settle (a background `git update-index
                      --refresh` once the checkout's second has passed): CPU, off the
                      landing's path. The bench waits for it before landing, as any real task
                      does (it is done ~1 s after the claim; a teammate's turn takes longer).
land_ms               complete a one-file change: commit, merge the main tree, apply to the
                      main tree, complete on the board, remove the worktree (median).
                      Target <= 300.
land_without_removal_ms  the same without the worktree removal (landing proper), for scale.
land_at_claim_ms      a landing started in the second of the claim, before the settle (no
                      real task is that fast): git re-reads every checked-out file; for scale.
git_commit_floor_ms   plain `git add -A && git commit` of a one-file change in a settled
                      plain worktree of the same repository, one sample next to each
                      landing: the floor of step 1 alone
                      (land_vs_floor, land_cpu_vs_floor: the ratios, steadier than ms on a
                      loaded machine).
*_cpu_ms              CPU time (this process + the git processes it ran) of the same steps:
                      on a shared, loaded machine wall-clock figures mostly measure the wait
                      for a core; load_avg_1m says how loaded it was.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from agent_cli.runtime import Runtime, RuntimeConfig


def git(cwd: Path, *args: str) -> None:
    env = dict(os.environ, GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@localhost",
               GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@localhost")
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def generate(root: Path, files: int) -> None:
    per_dir = 100
    for i in range(files):
        d = root / f"pkg{i // per_dir:03d}"
        if i % per_dir == 0:
            d.mkdir()
        (d / f"mod{i % per_dir:03d}.py").write_text(f"# module {i}\nVALUE = {i}\n" * 3)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "generated")
    settle(root)


def settle(tree: Path) -> None:
    """Past the second the index was just written in, `git status` (rewrites a racy index)."""
    time.sleep(int(time.time()) + 1.05 - time.time())
    git(tree, "status", "--porcelain")


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def _cpu() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(
        resource.RUSAGE_CHILDREN)
    return (own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime) * 1000


def measured(fn, cpu: list[float]) -> float:
    """Wall-clock ms of fn(); its CPU ms (this process and the git it ran) go to `cpu`."""
    before = _cpu()
    wall = timed(fn)
    cpu.append(_cpu() - before)
    return wall


def plain_add(root: Path, tag: str, cpu: list[float]) -> float:
    path = root.parent / f"plain-{tag}"
    wall = measured(lambda: git(root, "worktree", "add", "-q", "-b", f"plain-{tag}", str(path),
                                "HEAD"), cpu)
    git(root, "worktree", "remove", "--force", str(path))
    return wall


class CommitFloor:
    """`git add -A && git commit` of a one-file change in a settled plain worktree."""

    def __init__(self, root: Path) -> None:
        self.root, self.path = root, root.parent / "plain-commit"
        git(root, "worktree", "add", "-q", "-b", "plain-commit", str(self.path), "HEAD")
        settle(self.path)

    def once(self, i: int, cpu: list[float]) -> float:
        (self.path / "pkg050" / "mod050.py").write_text(f"# commit {i}\n")
        return measured(lambda: (git(self.path, "add", "-A"),
                                 git(self.path, "commit", "-q", "-m", f"commit {i}")), cpu)

    def close(self) -> None:
        git(self.root, "worktree", "remove", "--force", str(self.path))


class Runs:
    """The claim and landing runs on one runtime, figures collected per name."""

    def __init__(self, rt) -> None:
        self.rt = rt
        self.wt = rt.worktrees
        self.ms: dict[str, list[float]] = {}
        self.cpu: dict[str, list[float]] = {}

    def measure(self, name: str, fn) -> float:
        wall = measured(fn, self.cpu.setdefault(name, []))
        self.ms.setdefault(name, []).append(wall)
        return wall

    def join_sweeper(self) -> None:
        """The last landed worktree's files are deleted in the background (this process's
        CPU): not part of the next measurement."""
        if self.wt._sweeper is not None:
            self.wt._sweeper.join()

    def claim(self, i: int, tag: str):
        """A task claimed after the main tree changed (no snapshot reused): ready to land."""
        root = self.rt.workdir
        self.join_sweeper()
        (root / "pkg000" / "mod000.py").write_text(f"# the user's edit {tag}{i}\n")
        (root / f"untracked-{tag}{i}.txt").write_text("new\n")
        self.measure("snapshot", self.wt.snapshots.take)
        (root / "pkg000" / "mod001.py").write_text(f"# the user's edit {tag}{i}\n")
        task = self.rt.board.create(f"task {tag}{i}")
        claimed = {}

        def claim(owner=f"w{tag}{i}"):
            claimed["t"] = self.rt.board.claim(task.id, owner)
            assert "worktree" in self.wt.prepare(claimed["t"], owner)

        self.measure("create", claim)
        return claimed["t"]

    def land(self, name: str, t) -> None:
        (self.wt.path(t.id) / "pkg050" / "mod050.py").write_text(f"# task {t.id}\n")
        removal = {}
        real_remove = self.wt.remove
        self.wt.remove = lambda tid, **kw: removal.setdefault(
            "ms", timed(lambda: real_remove(tid, **kw)))
        try:
            wall = self.measure(name, lambda: self.wt.landing.land(t, t.owner, t.claim_token,
                                                                  "ok"))
        finally:
            self.wt.remove = real_remove
        self.ms.setdefault(f"{name}_without_removal", []).append(wall - removal.get("ms", 0.0))


def run_all(root: Path, runs: int) -> dict:
    """Each floor sampled next to what it is the floor of (the load drifts during a run)."""
    rt = Runtime.open(root, RuntimeConfig())
    r = Runs(rt)
    plain, plain_cpu, floor, floor_cpu = [], [], [], []
    plain_add(root, "warm", [])  # warm the caches once
    commits = CommitFloor(root)
    for i in range(runs):
        r.join_sweeper()
        plain.append(plain_add(root, str(i), plain_cpu))
        t = r.claim(i, "")
        r.measure("settle", lambda t=t: r.wt.wait_settled(t.id, 30.0))
        floor.append(commits.once(i, floor_cpu))
        r.land("land", t)
    commits.close()
    for i in range(runs):  # landing in the claim's second: before the settle ran
        r.land("land_at_claim", r.claim(i, "now-"))
    return {"plain": (plain, plain_cpu), "floor": (floor, floor_cpu), "ms": r.ms, "cpu": r.cpu}


def figures_of(got: dict, files: int) -> dict:
    med = statistics.median
    plain, plain_cpu = got["plain"]
    floor, floor_cpu = got["floor"]
    ms, cpu = got["ms"], got["cpu"]
    return {
        "files": files,
        "git_worktree_add_ms": round(med(plain), 1),
        "worktree_create_ms": round(med(ms["create"]), 1),
        "create_vs_floor": round(med(ms["create"]) / med(plain), 2),
        "snapshot_ms": round(med(ms["snapshot"]), 1),
        "land_ms": round(med(ms["land"]), 1),
        "land_without_removal_ms": round(med(ms["land_without_removal"]), 1),
        "land_at_claim_ms": round(med(ms["land_at_claim"]), 1),
        "git_commit_floor_ms": round(med(floor), 1),
        "land_vs_floor": round(med(ms["land"]) / med(floor), 2),
        "git_worktree_add_cpu_ms": round(med(plain_cpu), 1),
        "worktree_create_cpu_ms": round(med(cpu["create"]), 1),
        "create_cpu_vs_floor": round(med(cpu["create"]) / med(plain_cpu), 2),
        "settle_cpu_ms": round(med(cpu["settle"]), 1),
        "land_cpu_ms": round(med(cpu["land"]), 1),
        "land_at_claim_cpu_ms": round(med(cpu["land_at_claim"]), 1),
        "git_commit_floor_cpu_ms": round(med(floor_cpu), 1),
        "land_cpu_vs_floor": round(med(cpu["land"]) / med(floor_cpu), 2),
        "load_avg_1m": round(os.getloadavg()[0], 1),
        "targets": "worktree_create_ms <= 1.5 x git_worktree_add_ms; land_ms <= 300",
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--dir", default=None)
    opts = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-worktrees-", dir=opts.dir))
    try:
        root = tmp / "repo"
        root.mkdir()
        generate(root, opts.files)
        figures = figures_of(run_all(root, opts.runs), opts.files)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if opts.json:
        print(json.dumps(figures))
    else:
        for k, v in figures.items():
            print(f"{k:24} {v}")


if __name__ == "__main__":
    main()
