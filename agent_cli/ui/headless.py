"""Headless mode (`agent-cli -p PROMPT`): a lead turn with no terminal, optionally waiting
until the team is quiet, then the result as text or JSON.

With --wait the lead also answers its teammates, as it would in the REPL: a
plan_approval_request (a teammate is blocked on the lead) gets a lead turn at once; results,
errors and messages still unread once the team is quiet get one more lead turn, so the final
text reflects what happened. Each of these turns opens with the lead's `<inbox>` only; at most
MAX_LEAD_TURNS turns run in all.

No human is there to ask: the rules decide, and anything that would ask is denied. The
denials are collected (who, tool, what, the rule that would allow it; headless_listeners.py)
and reported. The whole run is bounded by --timeout: on expiry it says what was still running
and exits 1. The team is shut down cleanly at the end in every case.

Failures are never silent: a lead turn that ends in a model error prints one line on stderr
("agent-cli: lead model error (connection): ...") and adds "error": {kind, message} to the
JSON; a teammate that fails during the run (its `error` message to the lead) prints
"agent-cli: teammate alice failed: ..." and is listed in "teammate_errors".

The outcome is what the board says (ui/outcome.py): "outcome" is completed, unfinished,
timed_out, interrupted or error; "unfinished" lists each task the run created or claimed and
left undone, with the reason the host knows, one stderr line each. "tasks" is the board as
the run leaves it on disk, after the shutdown. Exit 0 only for completed (or a run that
touched no task), 130 when interrupted, else 1.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Sequence
from typing import Any, TextIO

from .. import safetext
from ..errors import UserError
from ..events import Notice
from ..pricing import cost_report
from ..team.elsewhere import worked_elsewhere
from .custom_commands import command_turn
from .headless_listeners import NO_HUMAN, HeadlessDenials, TeammateFailures, WarningLines
from .headless_session import HeadlessSession, result_fields
from .outcome import EXIT_CODES, RunScope, assess, explain, unfinished_line
from .stream_json import StreamJson
from .toolbar import count_tasks

MAX_LEAD_TURNS = 10
URGENT_TYPES = frozenset({"plan_approval_request"})  # a teammate waits for the lead
ANSWER_TYPES = frozenset({"plan_approval_request", "result", "error", "message"})


def check_prompt(prompt: str | None) -> str:
    """The -p prompt, or UserError when there is nothing to send."""
    if prompt is None or not prompt.strip():
        raise UserError("-p needs a prompt: the one given is empty")
    return prompt


def lead_error(turns: list[Any]) -> dict[str, str] | None:
    """{kind, message} of the last lead turn that ended in a model error, else None."""
    for turn in reversed(turns):
        if turn.stop_reason == "error":
            err = turn.error
            kind = getattr(err, "kind", "model")
            return {"kind": kind, "message": str(err) if err is not None else "model error"}
    return None


def run_headless(runtime: Any, args: Any, out: TextIO | None = None,
                 err: TextIO | None = None) -> int:
    """The lead's turn on `args.prompt`; --wait for a quiet team; print; exit code."""
    # what the model, tasks and teammates wrote is shown, never interpreted (safetext)
    out = safetext.SafeStream(out or sys.stdout)
    err = safetext.SafeStream(err or sys.stderr)
    prompt = check_prompt(args.prompt)
    limit = float(getattr(args, "timeout", 600.0) or 600.0)
    deadline = time.monotonic() + limit
    fmt = getattr(args, "output_format", "text")
    stream = StreamJson(out, runtime) if fmt == "stream-json" else None
    denials = HeadlessDenials(runtime.broker, on_denied=stream.approval if stream else None)
    denials.attach()
    failures = TeammateFailures()
    unsubscribe = runtime.events.subscribe(failures.on_event)
    # before the resumed teammates start: what they claim is this run's
    scope = RunScope.begin(runtime.board, [m.name for m in getattr(runtime, "resuming", [])])
    session = HeadlessSession(runtime)
    unsubscribe_warnings = runtime.events.subscribe(WarningLines(err).on_event)
    quiet, interrupted = False, False
    try:
        from .mcp_view import start_headless

        start_headless(runtime, err)
        from ..team.resume import resume_pending

        resume_pending(runtime)  # -c / --resume: the session's teammates, denials attached
        runtime.config.headless = True  # the lead's system prompt says nobody approves
        lead = runtime.team.make_lead()
        if stream is not None:
            stream.open(runtime, lead)
        session.start()
        custom = command_turn(runtime, prompt)  # `-p "/review security"`
        if custom is not None:  # its snippets run now: no human, the rules decide
            prompt = custom.prepare(lead)
        turns, quiet, finished, interrupted = _converse(
            runtime, lead, session, prompt, deadline, getattr(args, "wait", False),
            custom.scope if custom is not None else None,
            lambda: worked_elsewhere(runtime, lambda: scope.touched(runtime.board)))
        result = turns[-1] if turns else None
        report = build_report(runtime, lead, result, denials.snapshot())
        report["lead_turns"] = [_turn_record(t) for t in turns]
        if not quiet and not interrupted:
            report["timed_out"] = True
            report["still_running"] = still_running(runtime, lead_busy=not finished) + \
                worked_elsewhere(runtime, lambda: scope.touched(runtime.board))
        _add_errors(report, lead_error(turns), failures.snapshot())
        touched = scope.touched(runtime.board)
        known = explain(runtime, touched)  # before shutdown releases the held tasks
    finally:
        if not quiet:
            stop_teammates(runtime)  # out of time (or failing): do not wait for their work
        busy = runtime.close(5.0)
        runtime.broker.detach_ui()
        unsubscribe()
        unsubscribe_warnings()
        session.end()
    _settle(report, runtime, touched, known, interrupted)  # the board as left on disk
    session.annotate(report)
    if stream is not None:
        stream.result(report, result_fields(report, session))
    else:
        _print(report, fmt, out, err)
    code = _finish(report, quiet, limit, busy, err)
    if session.failed():
        err.write(session.failed() + "\n")
        err.flush()
        code = max(code, 1)
    return code


def _converse(runtime: Any, lead: Any, session: HeadlessSession, prompt: str, deadline: float,
              wait: bool, scope: Any = None, elsewhere: Any = None
              ) -> tuple[list[Any], bool, bool, bool]:
    """The lead's turn on the prompt (inside `scope(lead)`: a custom command's model and
    tools) and, with --wait, the turns that answer its teammates: (turns, quiet, finished,
    interrupted). Ctrl-C stops the lead; the run still reports."""
    sent = session.prompt(prompt)
    turn = session.turn(lead)
    first = turn if scope is None else _scoped(turn, scope, lead)
    try:
        attached = []
        if sent is not None:
            from .attachments import for_prompt  # images, PDFs the prompt names

            attached = for_prompt(runtime, prompt).blocks
        turns, finished = (_lead_turn(runtime, lead, sent, deadline, first, attached)
                           if sent is not None else ([], True))
        quiet = finished
        if finished and sent is not None and wait:
            more, quiet, finished = follow_up(runtime, lead, deadline, turn, session.spent,
                                              elsewhere)
            turns += more
    except KeyboardInterrupt:  # Ctrl-C: stop, and still say what the board holds
        lead.interrupt()
        return [], False, False, True
    return turns, quiet, finished, False


def _scoped(turn: Any, scope: Any, lead: Any) -> Any:
    def run(content: Any) -> Any:
        with scope(lead):
            return turn(content)
    return run


def _settle(report: dict[str, Any], runtime: Any, touched: list[int], known: Any,
            interrupted: bool) -> None:
    """The board as the run leaves it on disk, and the outcome it adds up to."""
    snap = runtime.board.snapshot()
    report["tasks"] = [t.model_dump(mode="json", by_alias=True) for t in snap.tasks]
    report["problems"] = [p.model_dump(mode="json") for p in snap.problems]
    outcome, unfinished = assess(
        runtime, touched, known,
        interrupted=interrupted,
        timed_out=bool(report.get("timed_out")),
        lead_failed="error" in report,
        teammate_failed=bool(report["teammate_errors"]),
    )
    report["outcome"] = outcome
    report["unfinished"] = unfinished


def _add_errors(report: dict[str, Any], error: dict[str, str] | None,
                mates: list[dict[str, str]]) -> None:
    if error is not None:
        report["error"] = error
    report["teammate_errors"] = mates


def _finish(report: dict[str, Any], quiet: bool, limit: float, busy: list[str],
            err: TextIO) -> int:
    """The closing lines on stderr (errors, unfinished tasks, busy teammates, timeout) and
    the exit code: 0 only for a completed run (or one that touched no task)."""
    for mate in report["teammate_errors"]:
        err.write(f"agent-cli: teammate {mate['message']}\n")
    error = report.get("error")
    if error is not None:
        err.write(f"agent-cli: lead model error ({error['kind']}): {error['message']}\n")
    for entry in report["unfinished"]:
        err.write(f"agent-cli: unfinished {unfinished_line(entry)}\n")
    if busy:
        err.write(f"agent-cli: still busy at exit: {', '.join(busy)}\n")
    if report.get("timed_out"):
        err.write(f"agent-cli: timed out after {limit:g}s; still running: "
                  f"{', '.join(report['still_running']) or 'nothing'}\n")
    if report["outcome"] == "interrupted":
        err.write("agent-cli: interrupted\n")
    err.flush()
    return EXIT_CODES[report["outcome"]]


def follow_up(runtime: Any, lead: Any, deadline: float, turn: Any = None,
              spent: Any = None, elsewhere: Any = None) -> tuple[list[Any], bool, bool]:
    """Wait for a quiet team, giving the lead a turn whenever its teammates need it (`turn`
    runs one; none once `spent()` says the --max-turns budget is used up). With
    `elsewhere` (-> what teammates in other processes still do on the run's tasks), the
    team is quiet only once that is empty too (team/elsewhere.py).

    Returns (the extra turns' results, quiet, the last lead turn finished).
    """
    team = runtime.team
    turns: list[Any] = []
    while True:
        if spent is not None and spent():
            return turns, team.is_quiet(), True
        left = max(0.0, deadline - time.monotonic())
        gen = runtime.changes.generation
        quiet = team.wait_quiet(left, wake=lambda: _unread(team, URGENT_TYPES))
        if quiet and elsewhere is not None and elsewhere():  # other processes' teammates
            quiet = False
            if not _unread(team, URGENT_TYPES):
                runtime.changes.wait(gen, min(left, runtime.recheck_interval(), 1.0))
                if time.monotonic() >= deadline:
                    return turns, False, True
                continue
        if not _unread(team, URGENT_TYPES if not quiet else ANSWER_TYPES):
            if quiet or time.monotonic() >= deadline:
                return turns, quiet, True
            continue  # woken for a message another reader already took in
        if len(turns) + 1 >= MAX_LEAD_TURNS:
            runtime.events.emit(Notice(agent="lead", level="warning", text=(
                f"stopped after {MAX_LEAD_TURNS} lead turns; unread messages stay in the inbox")))
            return turns, quiet or team.is_quiet(), True
        results, finished = _lead_turn(runtime, lead, None, deadline, turn)
        turns += results
        if not finished:
            return turns, False, False


def _unread(team: Any, types: frozenset[str]) -> bool:
    return any(m.type in types for m in team.lead_unread())


def _turn_record(result: Any) -> dict[str, Any]:
    return {"text": result.text, "stop_reason": result.stop_reason}


def stop_teammates(runtime: Any) -> None:
    """Interrupt every running teammate's turn so the shutdown that follows is quick."""
    for name in runtime.team.running():
        mate = runtime.team.teammate(name)
        if mate is not None:
            mate.agent.interrupt()


def _lead_turn(runtime: Any, lead: Any, prompt: str | None, deadline: float,
               turn: Any = None, attached: Sequence[Any] = ()) -> tuple[list[Any], bool]:
    """One lead turn on a thread so the deadline holds: its inbox, then `prompt` (None: the
    inbox alone; no turn when it is empty) and the images / PDFs it attaches. ([result] or
    [], finished). An exception raised by the turn is raised again here, on the caller's
    thread."""
    box: dict[str, Any] = {}
    done = threading.Event()

    def work() -> None:
        try:
            block = runtime.team.lead_inbox_block()
            content = [c for c in (block, prompt) if c]
            if content:
                content += attached
                box["result"] = (turn or lead.run_turn)(content if len(content) > 1
                                                        else content[0])
        except BaseException as exc:  # re-raised on the caller's thread, not printed here
            box["raised"] = exc
        finally:
            done.set()

    threading.Thread(target=work, name="lead-turn", daemon=True).start()
    finished = done.wait(max(0.0, deadline - time.monotonic()))
    if not finished:
        lead.interrupt()
        done.wait(5.0)
    if "raised" in box:
        raise box["raised"]
    return ([box["result"]] if "result" in box else []), finished


def build_report(runtime: Any, lead: Any, result: Any, denials: list[dict]) -> dict[str, Any]:
    snap = runtime.board.snapshot()
    members = [m for m in runtime.roster.members() if m.name != "lead"]
    teammates = {m.name: int(m.tokens or 0) for m in members}
    usage = lead.usage
    return {
        "result": result.text if result is not None else "",
        "stop_reason": result.stop_reason if result is not None else "timeout",
        "outcome": "",  # set from the board on disk once the team is shut down
        "unfinished": [],
        "tasks": [t.model_dump(mode="json", by_alias=True) for t in snap.tasks],
        "problems": [p.model_dump(mode="json") for p in snap.problems],
        "team": [m.model_dump(mode="json") for m in members],
        "usage": {
            "lead": {**usage.model_dump(), "total_tokens": usage.total},
            "teammates": teammates,
            "total_tokens": usage.total + sum(teammates.values()),
            **cost_report(lead.spend.rows(), members),  # cost_usd, cost_by_agent, ...
        },
        "denials": denials,
    }


def still_running(runtime: Any, lead_busy: bool) -> list[str]:
    """'alice (#2 write tests)' for each teammate not yet quiet (and the lead if busy)."""
    names = ["lead"] if lead_busy else []
    by_name = {m.name: m for m in runtime.roster.members()}
    for name in runtime.team.running():
        m = by_name.get(name)
        task = f" (#{m.current_task}, {m.status})" if m and m.current_task else ""
        names.append(f"{name}{task}")
    return names


def _print(report: dict[str, Any], fmt: str, out: TextIO, err: TextIO) -> None:
    if fmt == "json":
        out.write(safetext.dumps(report, indent=2) + "\n")
        out.flush()
        return
    texts = [t["text"] for t in report.get("lead_turns", []) if t["text"].strip()]
    if not texts and report["result"]:
        texts = [report["result"]]
    out.write("\n\n".join(t.rstrip("\n") for t in texts) + ("\n" if texts else ""))
    tasks = report["tasks"]
    if tasks:
        c = count_tasks([_TaskView(t) for t in tasks])
        out.write(f"\ntasks: {c.done} done, {c.in_progress} in progress, {c.pending} pending, "
                  f"{c.blocked} blocked\n")
        for t in tasks:
            owner = f" @{t['owner']}" if t.get("owner") else ""
            out.write(f"  #{t['id']} [{t['status']}]{owner} {t['subject']}\n")
    if tasks:
        out.write(f"\noutcome: {report['outcome']}\n")
    for entry in report["unfinished"]:
        out.write(f"  unfinished {unfinished_line(entry)}\n")
    out.flush()
    for d in report["denials"]:
        err.write(f"denied ({NO_HUMAN}): {d['agent']} {d['tool']} {d['target']}"
                  + (f" — allow with --allow '{d['rule']}'" if d["rule"] else "") + "\n")


class _TaskView:
    """A task dict seen with the attribute names count_tasks reads."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.id = data["id"]
        self.status = data["status"]
        self.blocked_by = data.get("blockedBy") or []
