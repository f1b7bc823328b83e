"""The command line around worktrees: where each task lives in `tasks list`, `tasks diff`,
`tasks doctor` listing stale worktrees and branches, `tasks clean-worktrees` keeping
unlanded work unless --force, `tasks complete` landing from a second terminal, the banner."""

from __future__ import annotations

from support.worktree import git, git_repo

from agent_cli.cli import main
from agent_cli.runtime import Runtime, RuntimeConfig


def _run(capsys, workdir, *argv) -> tuple[int, str]:
    code = main([*argv, "-C", str(workdir)])
    out = capsys.readouterr()
    return code, out.out + out.err


def _board(workdir):
    """#1 landed, #2 in a worktree with work, #3 completed around its worktree (unlanded
    work left behind), #4 completed with an empty worktree left behind."""
    git_repo(workdir, {"f.txt": "one\n"})
    rt = Runtime.open(workdir, RuntimeConfig())
    tasks = []
    for i in range(1, 5):
        t = rt.board.claim(rt.board.create(f"task {i}").id, ["alice", "bob", "carol", "dan"][i - 1])
        rt.worktrees.prepare(t, t.owner)
        tasks.append(t)
    (rt.worktrees.path(1) / "f.txt").write_text("one, landed\n")
    rt.worktrees.landing.land(tasks[0], "alice", tasks[0].claim_token, "landed one")
    (rt.worktrees.path(2) / "new.txt").write_text("bob's new file\n")
    (rt.worktrees.path(3) / "f.txt").write_text("never landed\n")
    for t in tasks[2:]:
        rt.board.complete(t.id, t.owner, t.claim_token, "completed by hand")
    return rt


def test_list_diff_doctor_and_clean(workdir, capsys):
    rt = _board(workdir)
    code, out = _run(capsys, workdir, "tasks", "list")
    assert code == 0
    rows = {line.split()[1]: line for line in out.splitlines() if line.split()[1:2]
            and line.split()[1].startswith("#")}
    assert "WHERE" in out
    assert rows["#1"].endswith("landed (1 file)")
    assert rows["#2"].endswith("worktree .agent-cli/worktrees/task-2")

    code, out = _run(capsys, workdir, "tasks", "diff", "1")
    assert code == 0 and "-one\n+one, landed" in out
    code, out = _run(capsys, workdir, "tasks", "diff", "2")
    assert code == 0 and "+++ b/new.txt" in out and "+bob's new file" in out
    code, out = _run(capsys, workdir, "tasks", "diff", "9")
    assert code == 3 and "task #9 has no worktree or branch" in out

    code, out = _run(capsys, workdir, "tasks", "doctor")
    assert code == 0
    assert ("worktree .agent-cli/worktrees/task-3 (task #3): its task is completed "
            "[stale, unlanded work]") in out
    assert "worktree .agent-cli/worktrees/task-4 (task #4): its task is completed [stale]" in out
    assert "branch agent-cli/task-1 (task #1): landed" in out
    assert "task-2 (task #2)" in out and "in progress [unlanded work]" in out

    code, out = _run(capsys, workdir, "tasks", "clean-worktrees")
    assert code == 0
    assert "kept worktree .agent-cli/worktrees/task-3: it holds unlanded work" in out
    assert "removed worktree .agent-cli/worktrees/task-4" in out
    assert (rt.worktrees.path(3) / "f.txt").read_text() == "never landed\n"
    assert not rt.worktrees.path(4).exists()
    assert rt.worktrees.path(2).exists()  # in progress: never a cleanup's business
    assert git(workdir, "branch", "--list", "agent-cli/task-1").strip()  # branches stay

    code, out = _run(capsys, workdir, "tasks", "clean-worktrees", "--force", "--branches")
    assert code == 0 and "removed worktree .agent-cli/worktrees/task-3" in out
    assert ("removed branch agent-cli/task-1 (its task landed; it was kept for "
            "`agent-cli tasks diff`)") in out
    assert not rt.worktrees.path(3).exists() and rt.worktrees.path(2).exists()


def test_complete_from_the_command_line_lands_the_worktree(workdir, capsys):
    _board(workdir)
    code, out = _run(capsys, workdir, "tasks", "complete", "2", "--as", "bob",
                     "--result", "added new.txt")
    assert code == 0, out
    assert "#2 completed by bob; landed: new.txt" in out
    assert (workdir / "new.txt").read_text() == "bob's new file\n"
    assert not (workdir / ".agent-cli" / "worktrees" / "task-2").exists()


def test_banner_says_where_teammates_work(workdir):
    from agent_cli.ui.startup import banner

    plain = banner(Runtime.open(workdir, RuntimeConfig()), "demo").plain
    assert "not a git repository: teammates share the workdir (no worktrees)" in plain
    git_repo(workdir, {"a": "a\n"})
    plain = banner(Runtime.open(workdir, RuntimeConfig()), "demo").plain
    assert "teammates work in git worktrees (.agent-cli/worktrees/)" in plain


def test_slash_tasks_shows_where_each_task_lives(workdir):
    from rich.console import Console

    from agent_cli.ui.tables import tasks_table

    rt = _board(workdir)
    console = Console(width=200, record=True)
    console.print(tasks_table(rt.board.snapshot().tasks, [], places=rt.worktrees.places()))
    text = console.export_text()
    assert "where" in text and "landed (1 file)" in text
    assert "worktree .agent-cli/worktrees/task-2" in text
    plain = Console(width=200, record=True)
    plain.print(tasks_table(rt.board.snapshot().tasks, [], places={}))
    assert "where" not in plain.export_text()  # outside git: the table as before


def test_landing_from_the_command_line_asks_before_a_model_written_verify(workdir, capsys):
    """Landing runs the task's verify in the worktree: a verify a model wrote needs the same
    approval as outside a worktree (no terminal here: refused until --run-verify)."""
    from agent_cli.board.models import Verify

    git_repo(workdir, {"f.txt": "one\n"})
    rt = Runtime.open(workdir, RuntimeConfig())
    marker = workdir.parent / "verify-ran"
    verify = Verify(command=f"touch {marker}", expected_exit_code=0, set_by="alice")
    t = rt.board.claim(rt.board.create("model verify", verify=verify).id, "bob")
    rt.worktrees.prepare(t, "bob")
    (rt.worktrees.path(t.id) / "g.txt").write_text("bob\n")
    code, out = _run(capsys, workdir, "tasks", "complete", str(t.id), "--as", "bob",
                     "--result", "r")
    assert code == 4 and "--run-verify" in out
    assert not marker.exists() and not (workdir / "g.txt").exists()
    assert rt.board.get(t.id).status == "in_progress"
    code, out = _run(capsys, workdir, "tasks", "complete", str(t.id), "--as", "bob",
                     "--result", "r", "--run-verify")
    assert code == 0, out
    assert marker.exists() and (workdir / "g.txt").read_text() == "bob\n"
    records = [r for r in rt.audit.entries() if r["tool"] == "verify"]
    assert [(r["decision"], r["verify_set_by"]) for r in records] == [
        ("deny", "alice"), ("allow", "alice")]


def test_a_landing_that_changes_nothing_leaves_no_branch(workdir, capsys):
    git_repo(workdir, {"f.txt": "one\n"})
    rt = Runtime.open(workdir, RuntimeConfig())
    empty, edit = (rt.board.claim(rt.board.create(s).id, who)
                   for s, who in (("look", "bob"), ("edit", "carol")))
    for t in (empty, edit):
        rt.worktrees.prepare(t, t.owner)
    (rt.worktrees.path(edit.id) / "f.txt").write_text("two\n")
    for t in (empty, edit):
        rt.worktrees.landing.land(t, t.owner, t.claim_token, "done")
    branches = git(workdir, "branch", "--list", "agent-cli/*").split()
    assert branches == ["agent-cli/task-2"]  # only the task that changed a file keeps one
    code, out = _run(capsys, workdir, "tasks", "diff", "1")
    assert code == 0 and "task #1 changes nothing" in out
    code, out = _run(capsys, workdir, "tasks", "list")
    assert "landed (no changes)" in out and "landed (1 file)" in out
    code, out = _run(capsys, workdir, "tasks", "doctor")
    assert "task #1" not in out and "agent-cli/task-2 (task #2): landed" in out
