"""What a teammate process prints and who answers its approvals: the session's broker is
injectable (the remote broker plugs in there), a question that reaches a human is announced
first, the plain broker with no UI refuses at once, and every line is one visible line."""

from __future__ import annotations

import threading

from support.team import Call, Recorder, Reply, complete_claimed, make_runtime

from agent_cli.commands.teammate_lines import ActivityLines, AnnouncingBroker
from agent_cli.events import TaskEvent, ToolFinished
from agent_cli.models.scripted import ScriptedModel
from agent_cli.permissions.broker import HEADLESS, ApprovalAnswer, ApprovalBroker, ApprovalRequest


class FarHuman:
    """A broker whose human is elsewhere (the lead's terminal on another host)."""

    def __init__(self, answer: str, log: list[str]) -> None:
        self.answer = answer
        self.log = log
        self.ui_attached = True

    def ask(self, request: ApprovalRequest, cancel: threading.Event | None = None):
        self.log.append(f"asked {request.tool} {request.summary}")
        return ApprovalAnswer(self.answer)

    def detach_ui(self) -> None:
        self.ui_attached = False


def test_an_injected_broker_answers_what_the_rules_leave_open(workdir, cleanup):
    log: list[str] = []
    model = ScriptedModel({"bob": [
        Reply(tool_calls=[Call("write_file", {"path": "notes.txt", "content": "hi\n"})]),
        complete_claimed("wrote notes.txt")]})
    rt = make_runtime(workdir, model, broker_factory=lambda runtime: FarHuman("allow_once", log))
    cleanup(rt)
    rec = Recorder(rt)
    task = rt.board.create("write notes")
    rt.team.spawn("bob", "writer")
    rec.wait_event("TaskEvent", action="completed", task_id=task.id)
    assert log == ["asked write_file notes.txt"]
    assert (workdir / "notes.txt").read_text() == "hi\n"


def test_a_question_to_a_human_is_announced_before_the_wait():
    log: list[str] = []
    lines = ActivityLines("bob", log.append)
    broker = AnnouncingBroker(FarHuman("deny", log), lines.waiting)
    request = ApprovalRequest("bob", "shell", {"command": "make"}, summary="make")
    assert broker.ask(request).decision == "deny"
    assert log == ["waiting for approval of shell make", "asked shell make"]
    assert broker.ui_attached  # the rest is the wrapped broker's


def test_with_the_plain_broker_and_no_ui_the_question_is_refused_at_once():
    log: list[str] = []
    broker = AnnouncingBroker(ApprovalBroker(), ActivityLines("bob", log.append).waiting)
    answer = broker.ask(ApprovalRequest("bob", "shell", {"command": "make"}, summary="make"))
    assert answer == HEADLESS and log == []


def test_lines_are_one_visible_line_of_this_teammate_only():
    log: list[str] = []
    lines = ActivityLines("bob", log.append)
    lines.on_event(TaskEvent("bob", "claimed", 3, subject="evil\x1b[2J\nnext"))
    lines.on_event(TaskEvent("alice", "claimed", 4, subject="not bob's"))
    lines.on_event(ToolFinished("bob", "shell", "make\ntest", ok=False, outcome="exit 2"))
    lines.on_event(TaskEvent("bob", "released", 3, detail="shutdown"))
    assert log == ["claimed #3 evil\\x1b[2J next", "ran shell make test: exit 2",
                   "released #3: shutdown"]
