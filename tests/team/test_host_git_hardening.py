"""The host's own git runs nothing from the work tree: with fsmonitor, hooks, an external
diff, a textconv driver, a pager, an ssh command and a credential helper all configured to
run scripts in the repository, a teammate rewrites one of them and its task lands — and no
script ran (each would have left a file). The user's own git then runs it: the trap was set."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from support.team import Recorder, make_runtime
from support.worktree import WAIT, complete_step, edit_step, git, git_repo

from agent_cli.gitrepo import GitRepo
from agent_cli.models.scripted import ScriptedModel

PROGRAMS = ("fsmonitor", "hook", "external", "textconv", "pager", "ssh", "credential")


def _script(marks: Path, name: str) -> str:
    return f"#!/bin/sh\necho ran >> '{marks / name}'\ncat >/dev/null 2>&1 </dev/null\nexit 0\n"


def _armed_repo(workdir: Path, marks: Path) -> None:
    """A repository whose config points every program git may run at a script in the tree
    (the fsmonitor one harmless until the teammate's edit)."""
    files = {"f.txt": "one\n", ".gitattributes": "*.txt diff=evil\n",
             "tools/fsmon.sh": "#!/bin/sh\nexit 0\n"}
    for name in PROGRAMS[1:]:
        files[f"tools/{name}.sh"] = _script(marks, name)
    for hook in ("post-checkout", "pre-commit", "post-commit", "post-merge",
                 "reference-transaction", "pre-merge-commit", "post-index-change"):
        files[f"hooks/{hook}"] = _script(marks, "hook")
    git_repo(workdir, files)
    for path in (workdir / "tools").iterdir():
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    for path in (workdir / "hooks").iterdir():
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    for key, value in (("core.fsmonitor", "tools/fsmon.sh"), ("core.hooksPath", "hooks"),
                       ("diff.external", "tools/external.sh"),
                       ("diff.evil.textconv", "tools/textconv.sh"),
                       ("core.pager", "tools/pager.sh"), ("core.sshCommand", "tools/ssh.sh"),
                       ("credential.helper", "!tools/credential.sh")):
        git(workdir, "config", key, value)


def test_landing_a_rewritten_fsmonitor_script_runs_none_of_the_configured_programs(
        workdir, tmp_path, cleanup):
    marks = tmp_path / "marks"
    marks.mkdir()
    _armed_repo(workdir, marks)
    evil = _script(marks, "fsmonitor")
    model = ScriptedModel({"alice": [
        edit_step("tools/fsmon.sh", "#!/bin/sh\nexit 0\n", evil),
        edit_step("f.txt", "one\n", "one\ntwo\n"),
        complete_step("done")]})
    rt = make_runtime(workdir, model, permission_mode="acceptEdits")
    cleanup(rt)
    rec = Recorder(rt)
    task = rt.board.create("rewrite the monitor")
    rt.team.spawn("alice", "worker")
    rec.wait_event("TaskEvent", action="completed", task_id=task.id)
    assert rt.team.wait_quiet(WAIT)

    assert (workdir / "tools" / "fsmon.sh").read_text() == evil  # landed
    assert (workdir / "f.txt").read_text() == "one\ntwo\n"
    assert sorted(os.listdir(marks)) == []  # nothing the config names ran
    # the trap was real: the user's own git runs the landed script
    git(workdir, "status", "--short")
    assert "fsmonitor" in os.listdir(marks)


def test_host_git_diff_ignores_external_diff_and_textconv(workdir, tmp_path):
    marks = tmp_path / "marks"
    marks.mkdir()
    _armed_repo(workdir, marks)
    (workdir / "f.txt").write_text("changed\n")
    repo = GitRepo.find(workdir)
    out = repo.out("diff", "HEAD", "--", "f.txt")
    assert "+changed" in out and "-one" in out  # git's own diff, not a program's
    assert repo.out("log", "-p", "-1", "--format=%s").startswith("start")
    assert os.listdir(marks) == []
    git(workdir, "diff", "HEAD", "--", "f.txt")  # the user's git runs diff.external
    assert "external" in os.listdir(marks)
