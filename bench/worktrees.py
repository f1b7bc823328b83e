"""Benchmark of task worktrees on a generated repository of 10,000 files.

    python bench/worktrees.py [--json] [--files N] [--runs N] [--dir DIR]

(--dir: where the repository is generated, e.g. /dev/shm to leave the disk out of it.)

git_worktree_add_ms   plain `git worktree add -b BRANCH PATH HEAD` (median): the floor.
worktree_create_ms    claim to ready: board.claim + Worktrees.prepare, i.e. a snapshot of the
                      main tree (one uncommitted edit and one untracked file in it, changed
                      before every run so no snapshot is reused) + `git worktree add` (median).
                      Target: <= 1.5 x git_worktree_add_ms (shown as create_vs_floor).
snapshot_ms           the snapshot alone, main tree changed (median), for scale.
land_ms               complete a one-file change: commit, merge the main tree, apply to the
                      main tree, complete on the board, remove the worktree (median).
                      Target <= 300.
land_unchanged_main_ms  the same without the worktree removal (landing proper), for scale.
*_cpu_ms              CPU time (this process + the git processes it ran) of the same three
                      steps: on a shared, loaded machine wall-clock figures mostly measure
                      the wait for a core; load_avg_1m says how loaded it was.
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


def plain_add(root: Path, runs: int, tag: str, cpu: list[float]) -> list[float]:
    out = []
    for i in range(runs):
        path = root.parent / f"plain-{tag}{i}"
        out.append(measured(lambda p=path, i=i: git(root, "worktree", "add", "-q", "-b",
                                                 f"plain-{tag}{i}", str(p), "HEAD"), cpu))
        git(root, "worktree", "remove", "--force", str(path))
    return out


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
        rt = Runtime.open(root, RuntimeConfig())
        wt = rt.worktrees
        plain_cpu, create_cpu, land_cpu = [], [], []
        plain_add(root, 1, "warm", [])  # warm the caches once
        plain = plain_add(root, opts.runs, "", plain_cpu)
        snaps, creates, lands, landings = [], [], [], []
        for i in range(opts.runs):
            if wt._sweeper is not None:  # the last landed worktree's files, deleted in the
                wt._sweeper.join()  # background: not part of the next measurement
            (root / "pkg000" / "mod000.py").write_text(f"# the user's edit {i}\n")
            (root / f"untracked-{i}.txt").write_text("new\n")
            snaps.append(timed(wt.snapshots.take))
            (root / "pkg000" / "mod001.py").write_text(f"# the user's edit {i}\n")
            task = rt.board.create(f"task {i}")
            claimed = {}

            def claim(task=task, claimed=claimed, owner=f"w{i}"):
                claimed["t"] = rt.board.claim(task.id, owner)
                assert "worktree" in wt.prepare(claimed["t"], owner)

            creates.append(measured(claim, create_cpu))
            t = claimed["t"]
            (wt.path(t.id) / "pkg050" / "mod050.py").write_text(f"# task {i}\n")
            removal = {}
            real_remove = wt.remove
            wt.remove = lambda tid, r=removal, f=real_remove: r.setdefault("ms", timed(
                lambda: f(tid)))
            lands.append(measured(lambda t=t: wt.landing.land(t, t.owner, t.claim_token, "ok"),
                                  land_cpu))
            wt.remove = real_remove
            landings.append(lands[-1] - removal.get("ms", 0.0))
        floor = statistics.median(plain)
        create = statistics.median(creates)
        figures = {
            "files": opts.files,
            "git_worktree_add_ms": round(floor, 1),
            "worktree_create_ms": round(create, 1),
            "create_vs_floor": round(create / floor, 2),
            "snapshot_ms": round(statistics.median(snaps), 1),
            "land_ms": round(statistics.median(lands), 1),
            "land_unchanged_main_ms": round(statistics.median(landings), 1),
            "git_worktree_add_cpu_ms": round(statistics.median(plain_cpu), 1),
            "worktree_create_cpu_ms": round(statistics.median(create_cpu), 1),
            "land_cpu_ms": round(statistics.median(land_cpu), 1),
            "load_avg_1m": round(os.getloadavg()[0], 1),
            "targets": "worktree_create_ms <= 1.5 x git_worktree_add_ms; land_ms <= 300",
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if opts.json:
        print(json.dumps(figures))
    else:
        for k, v in figures.items():
            print(f"{k:24} {v}")


if __name__ == "__main__":
    main()
