"""Work from another host lands: two clones of one repository share a bare remote; the
teammate's side pushes its task branch on completion, the lead's side fetches it and lands
it with the same landing (the user's other edits kept). A branch that cannot be fetched, or
that moved since the push, is refused with the reason and nothing lands.

The shared board of two hosts (PostgreSQL) is stood in for by replaying the teammate's
claim and completion on the lead's file board."""

from __future__ import annotations

import signal

import pytest
from support.team import Recorder, make_runtime
from support.teammate_proc import TeammateProcess, run_cli
from support.worktree import complete_step, edit_step, git, git_repo, numbered

from agent_cli.board.store import TaskBoard
from agent_cli.models.reply import Reply
from agent_cli.models.scripted import ScriptedModel
from agent_cli.team.remote_branches import pushed_of

BRANCH = "agent-cli/task-1"


@pytest.fixture
def hosts(tmp_path):
    """(lead clone, teammate clone, bare remote), both clones at the remote's main."""
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    lead = tmp_path / "lead"
    lead.mkdir()
    git_repo(lead, {"f.txt": numbered(), "notes.txt": "user notes\n"})
    git(lead, "remote", "add", "origin", str(origin))
    git(lead, "push", "-q", "origin", "main")
    git(tmp_path, "clone", "-q", str(origin), str(tmp_path / "mate"))
    return lead, tmp_path / "mate", origin


def _mate_completes(mate, cleanup, remote="origin", responder=None):
    model = ScriptedModel({"bob": [edit_step("f.txt", "line 2\n", "line two (bob)\n"),
                                   complete_step("bob edited line 2")]}, responder=responder)
    rt = make_runtime(mate, model, permission_mode="acceptEdits")
    cleanup(rt)
    rt.worktrees.set_remote(remote)
    rec = Recorder(rt)
    task = rt.board.create("edit line 2")
    rt.team.spawn("bob", "worker")
    return rt, rec, task


def _replay(lead, done):
    """The lead's board as the shared board would show it: bob claimed and completed."""
    board = TaskBoard(lead / ".tasks")
    task = board.create(done.subject)
    claimed = board.claim(task.id, "bob")
    board.complete(task.id, "bob", claimed.claim_token, done.result)
    return board


def test_a_pushed_task_branch_lands_in_the_leads_tree(hosts, cleanup):
    lead, mate, origin = hosts
    rt, rec, task = _mate_completes(mate, cleanup)
    rec.wait_event("TaskEvent", action="completed", task_id=task.id)
    done = rt.board.get(task.id)
    pushed = pushed_of(done)
    assert pushed is not None and pushed.remote == "origin" and pushed.branch == BRANCH
    assert done.result.startswith("bob edited line 2 [pushed agent-cli/task-1 ")
    assert git(origin, "rev-parse", BRANCH).strip() == pushed.commit
    assert (mate / "f.txt").read_text() == numbered()  # the teammate's own tree: untouched
    assert "pushed to origin" in run_cli(mate, "tasks", "list").stdout

    _replay(lead, done)
    (lead / "notes.txt").write_text("user notes, edited on the lead's host\n")
    out = run_cli(lead, "tasks", "land", "1")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["#1 landed: f.txt"]
    assert (lead / "f.txt").read_text() == numbered().replace("line 2\n", "line two (bob)\n")
    assert (lead / "notes.txt").read_text() == "user notes, edited on the lead's host\n"
    assert "landed (1 file)" in run_cli(lead, "tasks", "list").stdout
    again = run_cli(lead, "tasks", "land", "1")
    assert again.returncode == 4 and "already landed" in again.stderr


def test_a_branch_missing_from_the_remote_is_refused_with_the_reason(hosts):
    lead, _mate, _origin = hosts
    board = TaskBoard(lead / ".tasks")
    task = board.create("edit line 2")
    token = board.claim(task.id, "bob").claim_token
    board.complete(task.id, "bob", token, f"done [pushed {BRANCH} {'a' * 40} to origin]")
    out = run_cli(lead, "tasks", "land", "1")
    assert out.returncode == 4
    assert out.stderr.startswith(f"agent-cli: task #1 not landed: cannot fetch {BRANCH} from "
                                 "origin: ")
    assert (lead / "f.txt").read_text() == numbered()
    assert git(lead, "branch", "--list", BRANCH) == ""
    assert "landing refused: cannot fetch" in run_cli(lead, "tasks", "list").stdout


def test_a_branch_that_moved_since_the_push_is_refused_until_it_is_put_back(hosts, cleanup):
    lead, mate, origin = hosts
    rt, rec, task = _mate_completes(mate, cleanup)
    rec.wait_event("TaskEvent", action="completed", task_id=task.id)
    done = rt.board.get(task.id)
    other = git(origin, "rev-parse", "main").strip()
    git(origin, "update-ref", f"refs/heads/{BRANCH}", other)  # someone rewrote it
    _replay(lead, done)
    out = run_cli(lead, "tasks", "land", "1")
    assert out.returncode == 4
    assert f"not the pushed commit {pushed_of(done).commit[:12]}" in out.stderr
    assert (lead / "f.txt").read_text() == numbered()
    assert git(lead, "branch", "--list", BRANCH) == ""  # what was fetched is not kept
    git(origin, "update-ref", f"refs/heads/{BRANCH}", pushed_of(done).commit)  # put back
    assert run_cli(lead, "tasks", "land", "1").returncode == 0  # by hand, once fixed
    assert (lead / "f.txt").read_text() == numbered().replace("line 2\n", "line two (bob)\n")


def test_a_push_that_fails_keeps_the_task_with_its_owner(hosts, cleanup):
    _lead, mate, origin = hosts
    rt, rec, task = _mate_completes(mate, cleanup, remote="nowhere",
                                    responder=lambda request: Reply(text="I cannot push."))
    done = rec.wait_event("ToolFinished", agent="bob", tool="complete_task")
    assert not done.ok and "git push to nowhere failed" in done.content
    after = rt.board.get(task.id)
    assert (after.status, after.owner) == ("in_progress", "bob")
    assert git(origin, "branch", "--list", BRANCH) == ""


def test_a_completion_refused_after_the_push_takes_the_branch_back(hosts, cleanup):
    _lead, mate, origin = hosts
    rt, rec, task = _mate_completes(mate, cleanup, responder=lambda r: Reply(text="stuck"))
    complete = rt.board.complete

    def lost_meanwhile(task_id, owner, token, result="", actor=None):
        assert git(origin, "branch", "--list", BRANCH).strip() == BRANCH  # it was pushed
        rt.board.release(task_id, owner, reason="lease lost")  # another host's claim, say
        return complete(task_id, owner, token, result, actor)

    rt.board.complete = lost_meanwhile
    done = rec.wait_event("ToolFinished", agent="bob", tool="complete_task")
    assert (done.ok, done.content) == (False, "task 1 is not claimed")
    assert git(origin, "branch", "--list", BRANCH) == ""
    assert rt.board.get(task.id).status != "completed"


def test_the_leads_session_lands_pushed_work_when_the_result_arrives(hosts, cleanup):
    lead, mate, _origin = hosts
    rt, rec, task = _mate_completes(mate, cleanup)
    rec.wait_event("TaskEvent", action="completed", task_id=task.id)
    done = rt.board.get(task.id)
    _replay(lead, done)
    lead_rt = make_runtime(lead, ScriptedModel({}))
    cleanup(lead_rt)
    lead_rt.mail.send("bob", "lead", f"task #1 (edit line 2) completed: {done.result}",
                      type="result")  # as the shared mailbox brings it
    block = lead_rt.team.lead_inbox_block()
    assert ('<message from="host" type="landing">task #1 (edit line 2), pushed by bob to '
            "origin, landed in the main tree: f.txt</message>") in block
    assert (lead / "f.txt").read_text() == numbered().replace("line 2\n", "line two (bob)\n")
    lead_rt.mail.send("bob", "lead", "another result", type="result")
    assert "landing" not in lead_rt.team.lead_inbox_block()  # landed once


def test_a_teammate_process_with_remote_pushes_and_the_lead_lands_it(hosts):
    lead, mate, origin = hosts
    board = TaskBoard(mate / ".tasks")
    task = board.create("Write hello.txt", 'Write "hello from the other host" to hello.txt.')
    bob = TeammateProcess(mate, "bob", "--model", "demo", "--remote", "origin",
                          "--permission-mode", "acceptEdits")
    try:
        bob.wait_line(f"completed #{task.id}")
        bob.signal(signal.SIGTERM)
        bob.wait_line("shut down")
        bob.wait()
    finally:
        bob.kill()
    done = board.get(task.id)
    assert git(origin, "rev-parse", BRANCH).strip() == pushed_of(done).commit
    assert not (mate / "hello.txt").exists()  # pushed, not landed in its own clone
    _replay(lead, done)
    out = run_cli(lead, "tasks", "land", str(task.id))
    assert out.returncode == 0, out.stderr
    assert (lead / "hello.txt").read_text() == "hello from the other host\n"


def test_a_remote_the_clone_does_not_have_is_refused_before_joining(hosts):
    _lead, mate, _origin = hosts
    out = run_cli(mate, "teammate", "bob", "--model", "demo", "--remote", "upstream")
    assert out.returncode == 2
    assert "--remote upstream: no such git remote in " in out.stderr
    assert not (mate / ".team" / "config.json").exists()


def _planted(clone, marker):
    """A clone whose config names programs a push or fetch would run: a hooks directory
    (pre-push, reference-transaction), upload/receive programs, and a URL rewrite to ext::."""
    hooks = clone / "planted-hooks"
    hooks.mkdir()
    script = f"#!/bin/sh\necho \"$0\" >> {marker}\n"
    for name in ("pre-push", "reference-transaction", "post-merge", "post-checkout"):
        (hooks / name).write_text(script)
        (hooks / name).chmod(0o755)
    evil = clone / "evil-pack.sh"
    evil.write_text(script + 'exec "$(basename "$0")" "$@"\n')
    evil.chmod(0o755)
    git(clone, "config", "core.hooksPath", str(hooks))
    git(clone, "config", "remote.origin.uploadpack", str(evil))
    git(clone, "config", "remote.origin.receivepack", str(evil))


def test_push_and_fetch_run_none_of_the_programs_a_clones_config_names(hosts, cleanup):
    lead, mate, origin = hosts
    marker = lead.parent / "ran.txt"
    _planted(mate, marker)
    _planted(lead, marker)
    rt, rec, task = _mate_completes(mate, cleanup)
    rec.wait_event("TaskEvent", action="completed", task_id=task.id)
    done = rt.board.get(task.id)
    assert git(origin, "rev-parse", BRANCH).strip() == pushed_of(done).commit
    _replay(lead, done)
    out = run_cli(lead, "tasks", "land", "1")
    assert out.returncode == 0, out.stderr
    assert (lead / "f.txt").read_text() == numbered().replace("line 2\n", "line two (bob)\n")
    assert not marker.exists()
    git(mate, "fetch", "-q", "origin", check=False)  # the plain git the plants were made for
    assert marker.exists()


def test_a_remote_reached_only_through_a_command_is_not_fetched(hosts):
    lead, _mate, origin = hosts
    marker = lead.parent / "ran.txt"
    git(lead, "config", "remote.evil.url", f"ext::sh -c touch% {marker}")
    board = TaskBoard(lead / ".tasks")
    task = board.create("edit line 2")
    token = board.claim(task.id, "bob").claim_token
    board.complete(task.id, "bob", token, f"done [pushed {BRANCH} {'b' * 40} to evil]")
    out = run_cli(lead, "tasks", "land", "1")
    assert out.returncode == 4 and "cannot fetch agent-cli/task-1 from evil" in out.stderr
    assert not marker.exists()
