"""`agent-cli teammate NAME` as a second process next to a lead: it claims and completes a
task exactly once, shows in `agent-cli team` with its host, ends on the lead's shutdown
request or on SIGTERM (its task released), and a SIGKILL leaves its task to the lease, which
hands it to another teammate that completes it once."""

from __future__ import annotations

import os
import signal

import pytest
from support.team import make_runtime
from support.teammate_proc import TeammateProcess, events, run_cli

from agent_cli.board.store import TaskBoard
from agent_cli.models.scripted import ScriptedModel
from agent_cli.team.plans import review_plan
from agent_cli.team.roster import Roster, this_host

WRITE = 'Write "hello from a teammate" to notes.txt.'


def _changes(workdir, task_id):
    return [row for row in events(workdir, task_id) if row[0] != "created"]


def test_a_teammate_process_completes_once_shows_its_host_and_obeys_shutdown(workdir, cleanup):
    lead = make_runtime(workdir, ScriptedModel({}))
    cleanup(lead)
    task = lead.board.create("Write notes.txt", WRITE)
    bob = TeammateProcess(workdir, "bob", "--model", "demo", "--role", "writer",
                          "--permission-mode", "acceptEdits")
    try:
        assert "bob joined team default as writer on " in bob.wait_line("joined")
        bob.wait_line(f"claimed #{task.id} Write notes.txt")
        bob.wait_line(f"completed #{task.id}: created notes.txt")
        assert (workdir / "notes.txt").read_text() == "hello from a teammate\n"
        shown = run_cli(workdir, "team").stdout.splitlines()
        assert shown[1].split()[:4] == ["NAME", "ROLE", "STATUS", "HOST"]
        row = next(line.split() for line in shown if line.startswith("bob "))
        assert row[1] == "writer" and row[3] == this_host()
        twin = run_cli(workdir, "teammate", "bob", "--model", "demo")
        assert twin.returncode == 4
        assert f"bob is already running in process {bob.proc.pid} on " in twin.stderr
        req = lead.team.request_shutdown("bob")  # a teammate of another process
        bob.wait_line("shut down")
        assert bob.wait() == 0
    finally:
        bob.kill()
    assert _changes(workdir, task.id) == [("claimed", "bob"), ("completed", "bob")]
    assert Roster(workdir / ".team").get("bob").status == "shutdown"
    answers = [m for m in lead.mail.peek("lead") if m.type == "shutdown_response"]
    assert [(m.sender, m.request_id, m.approve) for m in answers] == [("bob", req.id, True)]


def test_a_teammate_process_waits_for_the_leads_plan_approval(workdir, cleanup):
    lead = make_runtime(workdir, ScriptedModel({}))
    cleanup(lead)
    task = lead.board.create("Write notes.txt", WRITE)
    bob = TeammateProcess(workdir, "bob", "--model", "demo", "--require-plan",
                          "--permission-mode", "acceptEdits")
    try:
        bob.wait_line("waiting for the lead to approve its plan")
        assert not (workdir / "notes.txt").exists()
        (req,) = lead.protocols.pending("plan_approval")
        assert req.sender == "bob"
        review_plan(lead, "lead", req.id, True, "go ahead")
        bob.wait_line(f"completed #{task.id}")
        bob.signal(signal.SIGTERM)
        bob.wait_line("shut down")
        bob.wait()
    finally:
        bob.kill()
    assert (workdir / "notes.txt").read_text() == "hello from a teammate\n"
    assert _changes(workdir, task.id) == [("claimed", "bob"), ("completed", "bob")]


@pytest.mark.parametrize(("sig", "said"), [(signal.SIGTERM, "SIGTERM"),
                                           (signal.SIGINT, "Ctrl-C")])
def test_sigterm_or_ctrl_c_releases_the_held_task(workdir, sig, said):
    task = TaskBoard(workdir / ".tasks").create("Write notes.txt", WRITE)
    bob = TeammateProcess(workdir, "bob", "--model", "demo")  # no rule allows the write
    try:
        refused = bob.wait_line("ran write_file notes.txt")
        assert "no human was available to approve" in refused and "headless" in refused
        bob.wait_line(f"idle: holds #{task.id}")
        bob.signal(sig)
        bob.wait_line(f"stopping ({said}): bob shuts down")
        bob.wait_line(f"released #{task.id}: shutdown")
        bob.wait_line("shut down")
        assert bob.wait() == 130
    finally:
        bob.kill()
    after = TaskBoard(workdir / ".tasks").get(task.id)
    assert (after.status, after.owner) == ("pending", None)
    assert not (workdir / "notes.txt").exists()
    assert Roster(workdir / ".team").get("bob").status == "shutdown"
    assert _changes(workdir, task.id) == [("claimed", "bob"), ("released", "bob")]


def test_sigkill_mid_task_hands_the_task_to_another_teammate_that_completes_it_once(workdir):
    task = TaskBoard(workdir / ".tasks").create("Write notes.txt", WRITE)
    bob = TeammateProcess(workdir, "bob", "--model", "demo", "--lease", "30")
    try:
        bob.wait_line(f"idle: holds #{task.id}")  # its write was refused: it holds the task
        os.killpg(bob.proc.pid, signal.SIGKILL)
        assert bob.wait() == -signal.SIGKILL
    finally:
        bob.kill()
    assert TaskBoard(workdir / ".tasks").get(task.id).owner == "bob"
    carol = TeammateProcess(workdir, "carol", "--model", "demo",
                            "--permission-mode", "acceptEdits")
    try:
        carol.wait_line(f"claimed #{task.id}")
        carol.wait_line(f"completed #{task.id}")
        shown = run_cli(workdir, "team").stdout
        assert f"gone (process {bob.proc.pid} ended)" in shown
        carol.signal(signal.SIGTERM)
        carol.wait_line("shut down")
        carol.wait()
    finally:
        carol.kill()
    assert (workdir / "notes.txt").read_text() == "hello from a teammate\n"
    changes = _changes(workdir, task.id)
    assert changes[0] == ("claimed", "bob") and changes[-2:] == [("claimed", "carol"),
                                                                 ("completed", "carol")]
    assert [a for a, _ in changes[1:-2]] == ["lease_expired"]
    assert carol.count("completed #") == 1


def test_an_unreachable_board_is_one_line_and_nothing_starts(workdir):
    out = run_cli(workdir, "teammate", "bob", "--board",
                  "postgresql://u:s3cret@127.0.0.1:1/db")
    lines = out.stderr.strip().splitlines()
    assert out.returncode != 0 and len(lines) == 1, out.stderr
    assert "127.0.0.1:1" in lines[0] and "s3cret" not in out.stderr + out.stdout
    assert not (workdir / ".team").exists()


def test_the_leads_name_is_not_a_teammates(workdir):
    out = run_cli(workdir, "teammate", "lead")
    assert (out.returncode, out.stderr.strip()) == (
        2, "agent-cli: 'lead' is the lead's own name; pick another teammate name")


def test_a_remote_that_is_not_a_name_is_refused(workdir):
    out = run_cli(workdir, "teammate", "bob", "--remote", "ext::sh -c evil")
    assert out.returncode == 2
    assert "give the name of a git remote" in out.stderr
    assert not (workdir / ".team").exists()


def test_a_repositorys_own_settings_do_not_widen_what_the_teammate_may_do(workdir):
    (workdir / ".agent-cli").mkdir()
    (workdir / ".agent-cli" / "settings.json").write_text(
        '{"permissions": {"allow": ["Write(*)"], "defaultMode": "bypassPermissions"}}')
    task = TaskBoard(workdir / ".tasks").create("Write notes.txt", WRITE)
    bob = TeammateProcess(workdir, "bob", "--model", "demo")
    try:
        assert "not trusted, not applied: allow Write(*)" in bob.wait_line("warning: ")
        assert "no human was available" in bob.wait_line("ran write_file notes.txt")
        bob.wait_line(f"idle: holds #{task.id}")
        bob.signal(signal.SIGTERM)
        bob.wait()
    finally:
        bob.kill()
    assert not (workdir / "notes.txt").exists()
