"""The demo model driving the real runtime in-process: teammates that really interleave, the
plan-approval walk with a human who says yes or no, and shutdown.

A "human" thread answers the approval broker the way the REPL's UI thread does. Waiting is on
the team's quiet condition and the broker's queue, never on a sleep.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from agent_cli.app import open_runtime
from agent_cli.permissions.broker import ApprovalAnswer
from agent_cli.runtime import Runtime, RuntimeConfig


class Human:
    """Answers every approval request with `decision`, from its own thread."""

    def __init__(self, rt: Runtime, decision: str) -> None:
        self.rt = rt
        self.decision = decision
        self.asked: list[tuple[str, str, str]] = []
        self._stop = threading.Event()
        rt.broker.attach_ui()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            req = self.rt.broker.next_request(timeout=0.05)
            if req is not None:
                self.asked.append((req.agent, req.tool, req.summary))
                self.rt.broker.answer(req.id, ApprovalAnswer(self.decision))

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)


@pytest.fixture
def session(workdir: Path):
    runtimes: list[Runtime] = []

    def open_(allow=(), idle_timeout_s=0.0) -> Runtime:
        rt = open_runtime(workdir, RuntimeConfig(model="demo", allow=list(allow),
                                                 idle_timeout_s=idle_timeout_s))
        runtimes.append(rt)
        return rt

    yield open_
    for rt in runtimes:
        rt.close(5)


def lead_turns(rt: Runtime, prompt: str, follow_ups: int = 3) -> list[str]:
    """One lead turn with `prompt`; then, while the team leaves messages, a turn per inbox."""
    lead = rt.team.make_lead()
    texts = [lead.run_turn(prompt).text]
    assert rt.team.wait_quiet(30), "the team never went quiet"
    for _ in range(follow_ups):
        block = rt.team.lead_inbox_block()
        if block is None:
            break
        texts.append(lead.run_turn([block]).text)
        assert rt.team.wait_quiet(30), "the team never went quiet"
    return texts


def tasks_by_subject(rt: Runtime):
    return {t.subject: t for t in rt.board.snapshot().tasks}


def test_alice_and_bob_split_three_tasks_by_themselves(session, workdir):
    rt = session(allow=["Bash(python --version)", "Write(*)"])
    texts = lead_turns(rt, "Create 3 tasks on the board, then spawn alice and bob. "
                           "Watch them auto-claim.")
    tasks = rt.board.snapshot().tasks
    assert [t.status for t in tasks] == ["completed"] * 3
    assert {t.owner for t in tasks} == {"alice", "bob"}
    assert (workdir / "hello.txt").read_text() == "Hello from the team.\n"
    assert "spawned alice" in texts[0] and "spawned bob" in texts[0]
    claims = [e for e in rt.board.events() if e.get("action") == "claimed"]
    assert len(claims) == 3


def test_writer_plans_the_lead_approves_and_the_human_still_decides_yes(session, workdir):
    rt = session()
    human = Human(rt, "allow_once")
    try:
        texts = lead_turns(rt, "Spawn writer with plan approval: she adds a line to NOTES.md")
    finally:
        human.stop()
    task = tasks_by_subject(rt)["Add a line to NOTES.md"]
    assert (task.status, task.owner) == ("completed", "writer")
    assert (workdir / "NOTES.md").read_text() == "Reviewed by the team.\n"
    assert human.asked == [("writer", "write_file", "NOTES.md")]
    plans = rt.protocols.pending(kind="plan_approval")
    assert plans == [] and rt.protocols.latest_plan("writer").status == "approved"
    assert any("review_plan" in t and "approved" in t for t in texts)


def test_a_denied_write_leaves_notes_unchanged_and_the_task_with_writer(session, workdir):
    (workdir / "NOTES.md").write_text("# Notes\n")
    rt = session()
    human = Human(rt, "deny")
    try:
        texts = lead_turns(rt, "Spawn writer with plan approval: she adds a line to NOTES.md")
    finally:
        human.stop()
    assert (workdir / "NOTES.md").read_text() == "# Notes\n"
    task = tasks_by_subject(rt)["Add a line to NOTES.md"]
    assert (task.status, task.owner) == ("in_progress", "writer")
    assert human.asked == [("writer", "write_file", "NOTES.md")]
    assert rt.protocols.latest_plan("writer").status == "approved"
    assert "writing NOTES.md was denied" in texts[-1]


def test_an_existing_main_py_is_never_overwritten(session, workdir):
    (workdir / "main.py").write_text("print(6 * 7)\n")
    rt = session(allow=["Bash(python main.py)", "Write(*)"])
    lead_turns(rt, "Check whether main.py's output matches expected.txt")
    assert (workdir / "main.py").read_text() == "print(6 * 7)\n"
    assert (workdir / "expected.txt").read_text() == "42\n"
    assert {t.subject: t.status for t in rt.board.snapshot().tasks} == {
        "source": "completed", "expected": "completed", "verify": "completed"}


def test_shut_down_alice_uses_the_protocol(session):
    rt = session(allow=["Bash(python --version)", "Write(*)"])
    lead_turns(rt, "Create 3 tasks on the board, then spawn alice and bob.")
    texts = lead_turns(rt, "Shut down alice")
    mate = rt.team.teammate("alice")
    assert mate is not None and mate.done.wait(10), "alice's thread did not end"
    assert rt.roster.get("alice").status == "shutdown"
    assert rt.roster.get("bob").status != "shutdown"
    assert "request_shutdown alice" in texts[0]


def test_after_a_denial_the_writer_retries_only_when_messaged(session, workdir):
    rt = session()
    human = Human(rt, "deny")
    try:
        lead_turns(rt, "Spawn writer with plan approval: she adds a line to NOTES.md")
        assert not (workdir / "NOTES.md").exists()
        assert rt.roster.get("writer").current_task is not None  # held, not re-queued
        human.decision = "allow_once"
        texts = lead_turns(rt, "Tell writer to retry")
    finally:
        human.stop()
    assert "send_message writer" in texts[0]
    assert (workdir / "NOTES.md").read_text() == "Reviewed by the team.\n"
    task = tasks_by_subject(rt)["Add a line to NOTES.md"]
    assert (task.status, task.owner) == ("completed", "writer")
    assert [a[1] for a in human.asked] == ["write_file", "write_file"]


def test_a_verify_retried_after_fixing_expected_names_what_was_read_again(session, workdir):
    (workdir / "expected.txt").write_text("43\n")
    rt = session(allow=["Bash(python main.py)", "Write(*)"])
    lead_turns(rt, "Check whether main.py's output matches expected.txt", follow_ups=0)
    verify = tasks_by_subject(rt)["verify"]
    assert verify.status == "in_progress"  # 43 vs 42: saying done completed nothing
    (workdir / "expected.txt").write_text("42\n")
    lead_turns(rt, f"Tell {verify.owner} to retry", follow_ups=0)
    verify = tasks_by_subject(rt)["verify"]
    assert verify.status == "completed"
    assert "expected.txt: 42" in verify.result and "43" not in verify.result
