"""UI pieces on their own: completion, event lines, the printer under threads, the toolbar,
approval panels, and slash handlers on a Console(file=StringIO())."""

from __future__ import annotations

import io
import os
import select
import threading
from pathlib import Path
from types import SimpleNamespace

from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from rich.console import Console
from support.team import WAIT

from agent_cli.app import open_runtime
from agent_cli.events import (
    MessageEvent,
    StatusEvent,
    TaskEvent,
    TextDeltaEvent,
    TextDone,
    ToolFinished,
)
from agent_cli.models.scripted import ScriptedModel
from agent_cli.permissions.broker import ApprovalRequest
from agent_cli.runtime import Runtime, RuntimeConfig
from agent_cli.ui.approvals import approval_panel
from agent_cli.ui.completer import SlashCompleter
from agent_cli.ui.printer import Printer
from agent_cli.ui.render import EventView, UiSettings, event_line
from agent_cli.ui.shell import run_user_shell
from agent_cli.ui.slash import SlashContext, argument_values, command_help, dispatch
from agent_cli.ui.style import make_console, render_str
from agent_cli.ui.toolbar import StatusCache, count_tasks, toolbar_fragments


def runtime(workdir: Path) -> Runtime:
    model = ScriptedModel({})
    return open_runtime(workdir, RuntimeConfig(model_factory=lambda a, s: model))


def completions(completer: SlashCompleter, text: str) -> list[str]:
    return [c.text for c in completer.get_completions(Document(text), CompleteEvent())]


def test_slash_completion_treats_the_slash_as_part_of_the_word(workdir: Path) -> None:
    rt = runtime(workdir)
    rt.board.create("one")
    rt.board.create("two")
    rt.roster.add("alice", "tester")
    completer = SlashCompleter(command_help(), argument_values(rt))
    assert completions(completer, "/ta") == ["/tasks"]
    assert completions(completer, "/t") == ["/tasks", "/team"]
    assert completions(completer, "/shutdown a") == ["alice"]
    assert completions(completer, "/tasks ") == ["1", "2", "graph"]
    assert completions(completer, "/permissions r") == ["remove"]
    assert completions(completer, "/mode p") == ["plan"]
    assert completions(completer, "hello /ta") == []


def test_event_lines_name_the_agent_first() -> None:
    def plain(event) -> str:
        return render_str(event_line(event), 100, False).rstrip()

    assert plain(TaskEvent("alice", "claimed", 2, "write tests")) == (
        "alice    claimed #2 write tests")
    assert plain(ToolFinished("bob", "shell", "pytest -q", False, "exit 1")) == (
        "bob      shell(pytest -q) ✗ exit 1")
    assert plain(MessageEvent("alice", "lead", "result", "done: 42")) == (
        "alice    → lead (result): done: 42")
    assert plain(StatusEvent("bob", "idle", None, "no claimable task")) == (
        "bob      is idle: no claimable task")
    # a teammate's text is no event line: EventView streams it with /verbose
    assert event_line(TextDone("alice", "thinking aloud")) is None
    assert event_line(TextDone("alice", "thinking aloud"), verbose=True) is None


def test_lead_text_streams_live_then_prints_as_markdown() -> None:
    buf = io.StringIO()
    view = EventView(Printer(buf), UiSettings(), lambda: 80, False)
    view.handle(TextDeltaEvent("lead", "# Plan\n"))
    view.handle(TextDeltaEvent("lead", "- **one**"))
    assert view.live()[0] == "# Plan\n- **one**" and buf.getvalue() == ""
    view.handle(TextDone("lead", "# Plan\n- **one**"))
    assert view.live()[0] == ""
    out = buf.getvalue()
    assert "Plan" in out and "• one" in out and "**" not in out


def test_printer_blocks_never_interleave_and_pause_holds_them() -> None:
    out = io.StringIO()
    printer = Printer(out)
    printer.pause()

    def writer(n: int) -> None:
        for i in range(200):
            printer.write(f"{n}-{i}-a\n{n}-{i}-b")

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    printer.write("the question", urgent=True)
    for t in threads:
        t.join()
    assert out.getvalue() == "the question\n"
    printer.resume()
    lines = out.getvalue().splitlines()[1:]
    assert len(lines) == 1600
    for a, b in zip(lines[::2], lines[1::2], strict=True):
        assert a.endswith("-a") and b == a[:-1] + "b"


def test_task_counts_and_toolbar_show_team_and_board(workdir: Path) -> None:
    rt = runtime(workdir)
    first = rt.board.create("a")
    rt.board.create("b", blocked_by=[first.id])
    rt.board.create("c")
    rt.board.claim(first.id, "alice")
    rt.roster.add("alice", "tester")
    rt.roster.update("alice", status="working", current_task=first.id)
    rt.roster.add("bob", "reviewer")
    snap = StatusCache(rt).get()
    c = snap.counts
    assert (c.done, c.in_progress, c.pending, c.blocked) == (0, 1, 1, 1)
    text = "".join(t for _, t in toolbar_fragments(snap, "claude-x", "default", 1234))
    assert "alice ▶ #1" in text and "bob ⏸ idle" in text
    assert "1 blocked" in text and "1.2k tokens" in text
    danger = toolbar_fragments(snap, "m", "bypassPermissions", 0)
    assert any("bypassPermissions" in t and "danger" in s for s, t in danger)
    assert count_tasks([]).pending == 0


def test_approval_panel_says_who_why_and_what_it_adds() -> None:
    req = ApprovalRequest(agent="alice", tool="write_file", input={}, summary="src/app.py",
                          preview="--- a\n+++ b\n-old\n+new", purpose="task #3 build",
                          suggested_rule="Write(src/**)")
    text = render_str(approval_panel(req), 100, False)
    assert "alice wants to write `src/app.py` — task #3 build" in text
    assert "+new" in text and "-old" in text
    assert "don't ask again for Write(src/**)" in text
    assert "3 No, and tell alice what to do differently" in text


def test_approval_panel_names_the_host_of_a_teammate_on_another_machine() -> None:
    req = ApprovalRequest(agent="alice", tool="shell", input={}, summary="make deploy",
                          host="build-2\x1b[2J")
    text = render_str(approval_panel(req), 100, False)
    assert "alice@build-2\\x1b[2J wants to run `make deploy`" in text
    assert "from host build-2\\x1b[2J: a teammate on another machine" in text
    assert "\x1b" not in text
    local = render_str(approval_panel(ApprovalRequest(agent="bob", tool="shell", input={},
                                                      summary="ls")), 100, False)
    assert "bob wants to run `ls`" in local and "from host" not in local


def ctx_for(rt: Runtime) -> tuple[SlashContext, io.StringIO]:
    buf = io.StringIO()
    lead = SimpleNamespace(agent=rt.team.make_lead(), busy=False)
    return SlashContext(make_console(buf, 100, False), rt, lead, UiSettings()), buf


def test_tasks_shows_a_corrupt_file_by_name_and_touches_nothing(workdir: Path) -> None:
    runtime(workdir).board.create("good one")
    (workdir / ".tasks" / "task_2.json").write_text("{not json", encoding="utf-8")
    rt = runtime(workdir)  # a later session finds the damaged file
    ctx, buf = ctx_for(rt)
    assert dispatch(ctx, "/tasks").ok
    out = buf.getvalue()
    assert "good one" in out and "[?]" in out and "task_2.json" in out
    assert any(p.name.startswith("task_2") for p in rt.tasks_dir.iterdir())


def test_bad_input_is_one_red_line_and_changes_nothing(workdir: Path) -> None:
    rt = runtime(workdir)
    ctx, buf = ctx_for(rt)
    for line, expect in [
        ("/tasks abc", "not a task id"),
        ("/tasks 9", "no task 9"),
        ("/permissions allow", "usage: /permissions"),
        ("/permissions remove Bash(ls)", "no rule"),
        ("/mode sideways", "unknown permission mode"),
        ("/spawn", "usage: /spawn"),
        ("/shutdown zed", "zed is not running"),
    ]:
        start = len(buf.getvalue())
        assert dispatch(ctx, line).ok is False, line
        shown = buf.getvalue()[start:]
        assert expect in shown and shown.count("\n") == 1, (line, shown)
    assert rt.policy.mode == "default" and rt.policy.rules() == []


def test_lead_changing_commands_wait_for_the_turn(workdir: Path) -> None:
    rt = runtime(workdir)
    ctx, buf = ctx_for(rt)
    ctx.lead.busy = True
    assert not dispatch(ctx, "/clear").ok
    assert "the lead is working" in buf.getvalue()


def test_spinner_shows_elapsed_time_activity_and_how_to_interrupt() -> None:
    from agent_cli.ui.render import spinner_line, stream_tail

    assert spinner_line(100.0, "", now=112.4).endswith("thinking… 12s · esc to interrupt")
    assert "running shell(ls)… 3s" in spinner_line(0.0, "shell(ls)", now=3.0)
    assert stream_tail("a\nb\nc", 80, lines=2) == ["b", "c"]
    assert stream_tail("x" * 25, 10, lines=6) == ["x" * 10, "x" * 10, "x" * 5]


def render(renderable) -> str:
    console = Console(file=None, width=100, record=True, color_system=None)
    with console.capture() as cap:
        console.print(renderable)
    return cap.get()


def test_user_shell_shows_output_and_exit_code(workdir):
    shown = render(run_user_shell("echo hello; echo oops >&2; exit 3", workdir))
    assert "$ echo hello" in shown and "hello" in shown and "oops" in shown
    assert "exit 3" in shown


def test_user_shell_timeout_kills_background_jobs_too(workdir):
    marker = workdir / "pid"
    shown = render(run_user_shell(f"sleep 60 & echo $! > {marker}; wait", workdir, timeout=0.5))
    assert "timed out" in shown
    pid = int(marker.read_text())
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return  # already gone and reaped
    try:  # a pidfd turns readable when the process has exited: no polling
        ready, _, _ = select.select([fd], [], [], WAIT)
    finally:
        os.close(fd)
    assert ready, "the background sleep outlived the timeout"
