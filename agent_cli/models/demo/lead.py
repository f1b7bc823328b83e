"""The demo lead: turns a demo prompt into real tool calls, one step per model call.

A scenario is a list of phases; each phase looks at what earlier phases of this turn got back
and returns the next tool calls (or nothing, to skip, or a final text, to stop early). The
phase a call belongs to is written into its tool-use id, so the next request tells where the
turn is without any state kept here. Phase 0 of every turn answers what the `<inbox>` brought
(plan approval requests are reviewed). The closing text only reports results actually seen.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...framing import FramedMessage, split_framed
from ..base import ModelRequest
from ..reply import Call, Reply
from .closing import call_label, closing_sections, is_headless
from .conversation import Pair, first_line, last_opening, message_text, pairs_since, task_id_in
from .intents import Intent, help_text, parse_intent
from .texts import (
    ABC_TASKS,
    CHECKER,
    CODER,
    CODER_TASKS,
    GENERALIST,
    MAIN_PY,
    PLAN_TASK,
    board_tasks,
    expected_txt,
    verify_tasks,
)

PHASE_ID_RE = re.compile(r"^toolu_demo_p(\d+)_")
MISSING_RE = re.compile(r"not found|no such|does not exist|doesn't exist|missing|not exist")


@dataclass
class LeadTurn:
    """What the current lead turn knows: the prompt, the inbox, results so far by phase."""

    intent: Intent
    inbox: list[FramedMessage]
    tools: set[str]
    headless: bool = False
    by_phase: dict[int, list[Pair]] = field(default_factory=dict)

    def results(self, phase: int) -> list[Pair]:
        return self.by_phase.get(phase, [])

    def all_pairs(self) -> list[Pair]:
        return [p for k in sorted(self.by_phase) for p in self.by_phase[k]]


Phase = Callable[[LeadTurn], "list[tuple[str, dict[str, Any]]] | str"]


def shown(msg: FramedMessage) -> str:
    """What the closing text shows of a message: a plan's steps, not only its title."""
    if "plan" in msg.type and "\n" in msg.content:
        return " / ".join(msg.plan_lines())
    return msg.content


def react_to_inbox(turn: LeadTurn) -> list[tuple[str, dict[str, Any]]]:
    if "review_plan" not in turn.tools:
        return []
    return [
        ("review_plan", {
            "request_id": item.request_id,
            "approve": True,
            "feedback": "Approved by the demo lead. Go ahead: the file change itself will "
            "still ask the human.",
        })
        for item in turn.inbox
        if item.request_id and "plan" in item.type
    ]


def _create(subject: str, description: str, **extra: Any) -> tuple[str, dict[str, Any]]:
    return ("create_task", {"subject": subject, "description": description, **extra})


def _ids(pairs: list[Pair]) -> list[int | None]:
    return [task_id_in(p.text) if p.ok else None for p in pairs]


def _spawn(turn: LeadTurn, role: str, **extra: Any) -> list[tuple[str, dict[str, Any]]]:
    return [("spawn_teammate", {"name": n, "role": role, **extra}) for n in turn.intent.names]


def _stop_if_failed(turn: LeadTurn, phase: int) -> str | None:
    ids = _ids(turn.results(phase))
    if not ids or None in ids:
        return "stop"
    return None


# -- scenarios -------------------------------------------------------------------------

def board_create(turn: LeadTurn):
    return [_create(s, d, role=GENERALIST) for s, d in board_tasks(turn.intent.count)]


def board_spawn(turn: LeadTurn):
    if _stop_if_failed(turn, 1):
        return "stop"
    return _spawn(turn, GENERALIST)


def coder_first(turn: LeadTurn):
    return [_create(*CODER_TASKS[0], role=CODER)]


def coder_second(turn: LeadTurn):
    if _stop_if_failed(turn, 1):
        return "stop"
    first = _ids(turn.results(1))[0]
    return [_create(*CODER_TASKS[1], blocked_by=[first], role=CODER)]


def coder_spawn(turn: LeadTurn):
    if _stop_if_failed(turn, 2):
        return "stop"
    return _spawn(turn, CODER)


def abc_first(turn: LeadTurn):
    return [_create(*ABC_TASKS[0], role=GENERALIST), _create(*ABC_TASKS[1], role=GENERALIST)]


def abc_last(turn: LeadTurn):
    if _stop_if_failed(turn, 1):
        return "stop"
    return [_create(*ABC_TASKS[2], blocked_by=_ids(turn.results(1)), role=GENERALIST)]


def abc_spawn(turn: LeadTurn):
    if _stop_if_failed(turn, 2):
        return "stop"
    return _spawn(turn, GENERALIST)


def verify_look(turn: LeadTurn):
    return [("read_file", {"path": "main.py"}), ("read_file", {"path": "expected.txt"})]


def verify_files(turn: LeadTurn):
    """Create main.py / expected.txt only when reading them said they do not exist."""
    contents = {"main.py": MAIN_PY, "expected.txt": expected_txt()}
    calls = []
    for pair in turn.results(1):
        path = pair.use.input.get("path", "")
        if not pair.ok and MISSING_RE.search(pair.text.lower()) and path in contents:
            calls.append(("write_file", {"path": path, "content": contents[path]}))
    return calls


def verify_first(turn: LeadTurn):
    if any(not p.ok for p in turn.results(2)):
        return "stop"
    source, expected, _ = verify_tasks()
    return [_create(*source, role=CHECKER), _create(*expected, role=CHECKER)]


def verify_last(turn: LeadTurn):
    if _stop_if_failed(turn, 3):
        return "stop"
    _, _, verify = verify_tasks()
    check = {"command": "python main.py", "expected_stdout_file": "expected.txt"}
    return [_create(*verify, blocked_by=_ids(turn.results(3)), verify=check, role=CHECKER)]


def verify_spawn(turn: LeadTurn):
    if _stop_if_failed(turn, 4):
        return "stop"
    return [("spawn_teammate", {"name": n, "role": CHECKER}) for n in ("reader", "reviewer")]


def plan_look(turn: LeadTurn):
    return [("list_teammates", {})]


def plan_create(turn: LeadTurn):
    """The task is writer's and needs a plan: an idle teammate cannot grab it first."""
    return [_create(*PLAN_TASK, assignee=turn.intent.names[0], require_plan=True)]


def plan_spawn(turn: LeadTurn):
    if _stop_if_failed(turn, 2):
        return "stop"
    listed = "\n".join(p.text for p in turn.results(1) if p.ok)
    names = [n for n in turn.intent.names if not running_in(listed, n)]
    if not names:
        return []  # writer already runs: she claims the task herself
    prompt = ("Before changing any file, submit a plan with submit_plan and wait for the "
              "lead's answer.")
    return [("spawn_teammate", {"name": n, "role": "writer", "require_plan": True,
                                "prompt": prompt}) for n in names]


def running_in(listing: str, name: str) -> bool:
    """Whether list_teammates' text shows `name` as running (not shut down or failed)."""
    for line in listing.splitlines():
        if line.startswith(f"{name} ("):
            status = line.split("): ", 1)[-1].split(",")[0].split(" ")[0]
            return status not in ("shutdown", "failed")
    return False


def look(turn: LeadTurn):
    """The board as the turn ends, when it created tasks: the closing text reports it."""
    pairs = turn.all_pairs()
    if any(not p.ok for p in pairs if p.use.name != "read_file"):
        return "stop"  # the closing text reports the failure
    made = any(p.use.name == "create_task" and p.ok for p in pairs)
    return [("list_tasks", {})] if made else []


def shutdown_ask(turn: LeadTurn):
    return [("request_shutdown", {"name": n}) for n in turn.intent.names]


def message_send(turn: LeadTurn):
    return [("send_message", {"to": n, "content": turn.intent.message}) for n in turn.intent.names]


SCENARIOS: dict[str, list[Phase]] = {
    "board": [board_create, board_spawn, look],
    "coder": [coder_first, coder_second, coder_spawn, look],
    "abc": [abc_first, abc_last, abc_spawn, look],
    "verify": [verify_look, verify_files, verify_first, verify_last, verify_spawn, look],
    "plan": [plan_look, plan_create, plan_spawn, look],
    "shutdown": [shutdown_ask],
    "message": [message_send],
    "help": [],
}


# -- the step ---------------------------------------------------------------------------

def lead_reply(request: ModelRequest) -> Reply:
    """The lead's next step: the next phase's tool calls, or the closing text."""
    messages = request.messages
    start = last_opening(messages)
    opening = message_text(messages[start]) if messages else ""
    inbox, user_text = split_framed(opening)
    intent = parse_intent(user_text) if user_text else Intent("help")
    turn = LeadTurn(intent, inbox, {t.name for t in request.tools}, is_headless(request.system))
    last_phase = -1
    for pair in pairs_since(messages, start):
        m = PHASE_ID_RE.match(pair.use.id)
        phase = int(m.group(1)) if m else last_phase
        turn.by_phase.setdefault(phase, []).append(pair)
        last_phase = max(last_phase, phase)
    phases: list[Phase] = [react_to_inbox, *SCENARIOS[intent.scenario]]
    for index in range(last_phase + 1, len(phases)):
        out = phases[index](turn)
        if isinstance(out, str):
            break
        if not out:
            continue
        missing = sorted({name for name, _ in out} - turn.tools)
        if missing:
            return Reply(f"(demo model) I cannot do this here: no {', '.join(missing)} tool.")
        calls = [Call(name, args) for name, args in out]
        return Reply(_narrate(out, intent.lang), calls, id_tag=f"p{index}_")
    return Reply(closing_text(turn, user_text))


def _narrate(calls: list[tuple[str, dict[str, Any]]], lang: str) -> str:
    labels = ", ".join(call_label(n, i) for n, i in calls)
    return f"下一步：{labels}" if lang == "zh" else f"Next: {labels}"


def closing_text(turn: LeadTurn, user_text: str) -> str:
    """What the inbox brought, then what the tools actually returned (errors and denials
    included) and what that adds up to (closing.py), as Markdown: a list per section,
    sections apart, so the REPL renders one line per item."""
    zh = turn.intent.lang == "zh"
    pairs = turn.all_pairs()
    sections: list[list[str]] = []
    if turn.inbox:
        sections.append(["收件箱：" if zh else "Inbox:"] + [
            f"- {i.sender} ({i.type}): {first_line(shown(i), 160)}" for i in turn.inbox])
    if turn.intent.scenario == "help" and not pairs:
        if turn.inbox and not user_text:  # a turn that only delivers the inbox
            return "(demo model) " + _join(sections)
        return _join([[help_text(turn.intent.lang)], *sections])
    sections += closing_sections(pairs, turn.intent.lang, turn.headless)
    return "(demo model) " + _join(sections)


def _join(sections: list[list[str]]) -> str:
    return "\n\n".join("\n".join(lines) for lines in sections if lines)


def new_tool_id(tag: str) -> str:
    """A tool-use id unique across runs; `tag` ("p2_": a phase) comes first, where
    PHASE_ID_RE reads it back."""
    return f"toolu_demo_{tag}{uuid.uuid4().hex[:16]}"
