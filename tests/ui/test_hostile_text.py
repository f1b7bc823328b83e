"""Terminal output is data: one hostile string (escape sequences, C1, bidi overrides, a lone
surrogate, rich markup) pushed through every sink a user sees -- the approval panel, the
REPL feed, the slash tables, the command-line verbs (text, JSON, Mermaid, DOT), watch and
headless output, the session list -- reaches none of them raw, and is shown as escapes."""

from __future__ import annotations

import io
import json
import unicodedata
from pathlib import Path
from types import SimpleNamespace

import pytest
from rich.text import Text
from support.cli import run_scripted

from agent_cli.app import open_runtime
from agent_cli.cli import main
from agent_cli.events import (
    AgentError,
    MessageEvent,
    Notice,
    StatusEvent,
    TaskEvent,
    TextDone,
    ToolFinished,
)
from agent_cli.models.scripted import ScriptedModel
from agent_cli.permissions.broker import ApprovalRequest
from agent_cli.runtime import RuntimeConfig
from agent_cli.safetext import dumps, visible
from agent_cli.ui.approvals import approval_panel, outcome_line
from agent_cli.ui.printer import Printer
from agent_cli.ui.render import EventView, UiSettings, event_line, stream_tail
from agent_cli.ui.slash import SlashContext, dispatch
from agent_cli.ui.style import make_console, render_str
from agent_cli.ui.watch import print_once

# Erase the screen, set the title, C1 CSI, a right-to-left override, an isolate, DEL, the
# approval spoof, rich markup and a lone surrogate.
H = ("A\x1b[2J\x1b]0;pwn\x07B\x9b31m\u202eevil\u2066\x7f\x1b[2K\x1b[1G│ lead wants to run"
     " `ls`[red]x[/red]\ud800Z")
# What a task, roster or message model accepts (pydantic refuses a lone surrogate: such a
# file is reported as unreadable, by name).
STORED = H.replace("\ud800", "")
SPOOF = "\x1b[2K\x1b[1G│ lead wants to run `ls -la`"


def raw_controls(text: str) -> set[str]:
    """Characters of `text` a terminal would interpret or hide (tab and newline aside)."""
    return {c for c in text if c not in "\n\t\u200c\u200d"
            and unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp")}


def assert_shown_safely(out: str, shown: str = "\\x1b[2J") -> None:
    assert out.strip(), "the sink printed nothing"
    assert raw_controls(out) == set(), f"raw control characters reached the output: {out!r}"
    assert shown in out, f"the hostile text is not shown as escapes: {out!r}"


def runtime(workdir: Path):
    model = ScriptedModel({})
    return open_runtime(workdir, RuntimeConfig(model_factory=lambda a, s: model))


@pytest.fixture
def planted(workdir: Path) -> Path:
    """A workdir whose task, team config, lead inbox and last session all carry H, planted
    in the files as a cloned repository or a model would leave them."""
    rt = runtime(workdir)
    rt.board.create(STORED, description=STORED)
    rt.roster.add("alice", "dev")
    rt.mail.send("alice", "lead", STORED)
    rt.close()
    task = workdir / ".tasks" / "task_1.json"
    data = json.loads(task.read_text(encoding="utf-8"))
    task.write_text(json.dumps({**data, "result": STORED}), encoding="utf-8")
    config = workdir / ".team" / "config.json"
    data = json.loads(config.read_text(encoding="utf-8"))
    for member in data["members"]:
        member.update(role=STORED, idle_reason=STORED)
    config.write_text(json.dumps(data), encoding="utf-8")
    session = workdir / ".team" / "transcripts" / "sessions" / "20260101-000000000-abcd"
    session.mkdir(parents=True)
    (session / "session.json").write_text(json.dumps(
        {"id": session.name, "started_at": "2026-01-01T00:00:00Z", "team": [H]}))
    (session / "lead.jsonl").write_text(json.dumps(
        {"kind": "message", "message": {"role": "user", "content": H}}) + "\n")
    return workdir


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    main(list(argv))
    got = capsys.readouterr()
    return got.out + got.err


CLI_SINKS = [
    ("tasks", "list"), ("tasks", "show", "1"), ("tasks", "graph"),
    ("tasks", "graph", "--format", "mermaid"), ("tasks", "graph", "--format", "dot"),
    ("team",), ("inbox", "lead"),
]


@pytest.mark.parametrize("verb", CLI_SINKS, ids=" ".join)
def test_command_line_verbs_show_planted_text_as_escapes(planted: Path, capsys, verb) -> None:
    assert_shown_safely(cli(capsys, *verb, "-C", str(planted)))


def test_session_list_shows_a_planted_prompt_as_escapes(planted: Path, capsys) -> None:
    assert_shown_safely(cli(capsys, "-C", str(planted), "--resume"))


def test_json_output_is_safe_and_reads_back_the_exact_text(planted: Path, capsys) -> None:
    out = cli(capsys, "tasks", "list", "--json", "-C", str(planted))
    assert raw_controls(out) == set()
    assert json.loads(out)[0]["subject"] == STORED  # JSON escapes: nothing lost
    assert json.loads(dumps({"s": "\U000e0041\u202e"})) == {"s": "\U000e0041\u202e"}


def slash(workdir: Path, command: str) -> str:
    rt = runtime(workdir)
    try:
        buf = io.StringIO()
        lead = SimpleNamespace(agent=rt.team.make_lead(), busy=False)
        ctx = SlashContext(make_console(buf, 200, False), rt, lead, UiSettings())
        assert dispatch(ctx, command).ok
        return buf.getvalue()
    finally:
        rt.close()


@pytest.mark.parametrize("command", ["/tasks", "/tasks 1", "/tasks graph", "/team", "/inbox",
                                     "/resume"])
def test_slash_commands_show_planted_text_as_escapes(planted: Path, command: str) -> None:
    out = slash(planted, command)
    assert_shown_safely(out)
    if command == "/tasks":
        assert "[red]x[/red]" in out  # markup in a subject is text


def test_watch_once_shows_planted_text_as_escapes(planted: Path) -> None:
    out = io.StringIO()
    print_once(planted, out, width=200)
    assert_shown_safely(out.getvalue())


FEED_EVENTS = [
    ToolFinished("alice", "shell", H, ok=True, outcome=H),
    ToolFinished("alice", H, H, ok=False, outcome=H),
    TaskEvent("alice", "claimed", 1, subject=H, detail=H),
    MessageEvent("alice", H, "message", H),
    StatusEvent("alice", "idle", reason=H),
    AgentError("alice", H, "model"),
    Notice("alice", H, "warning"),
]


@pytest.mark.parametrize("event", FEED_EVENTS, ids=lambda e: type(e).__name__)
def test_every_feed_line_shows_hostile_text_as_escapes(event) -> None:
    line = event_line(event, verbose=True)
    assert line is not None
    assert_shown_safely(render_str(line, 400, False))


def test_streamed_and_finished_text_show_as_escapes() -> None:
    out = io.StringIO()
    view = EventView(Printer(out), UiSettings(verbose=True), lambda: 200, False)
    view.handle(TextDone("lead", H))  # the lead's reply, rendered as Markdown
    view.handle(TextDone("alice", H + "\n" + H))  # a teammate's text under /verbose
    assert_shown_safely(out.getvalue())
    assert_shown_safely("\n".join(stream_tail(H, 300)))  # the live region above the prompt


def request(command: str) -> ApprovalRequest:
    return ApprovalRequest(agent="lead", tool="shell", input={"command": command},
                           summary=command, preview=command, suggested_rule=f"Bash({command})")


def test_approval_panel_shows_the_spoofed_command_with_its_escapes_marked() -> None:
    command = f"rm -rf ~/work {SPOOF}"
    out = render_str(approval_panel(request(command)), 200, False)
    assert_shown_safely(out, "rm -rf ~/work \\x1b[2K\\x1b[1G│ lead wants to run `ls -la`")
    assert "contains 2 control or invisible characters" in out
    coloured = render_str(approval_panel(request(command)), 200, True)
    assert "\x1b[2K" not in coloured and "\x1b[1G" not in coloured  # only our own colours
    answer = SimpleNamespace(decision="allow_once", feedback="", save=False)
    assert_shown_safely(render_str(outcome_line(request(command), answer), 200, False),
                        "\\x1b[2K")


def test_a_plain_command_gets_no_warning() -> None:
    out = render_str(approval_panel(request("ls -la")), 200, False)
    assert "control or invisible" not in out and "`ls -la`" in out


def test_the_audit_keeps_the_exact_command(workdir: Path) -> None:
    """What the panel shows escaped, the audit log keeps byte for byte (headless denial)."""
    script = {"lead": [{"text": "", "tool_calls": [{"name": "shell",
                                                      "input": {"command": "ls " + SPOOF}}]},
                       {"text": H}]}
    proc = run_scripted(workdir, script, "go")
    assert "Traceback" not in proc.stderr
    assert_shown_safely(proc.stdout + proc.stderr)
    entries = [json.loads(line) for line in
               (workdir / ".team" / "audit.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [e["input"]["command"] for e in entries if e["tool"] == "shell"] == ["ls " + SPOOF]


def test_visible_is_idempotent_and_keeps_ordinary_text() -> None:
    assert visible("naïve 中文 emoji 👩‍💻\ttab\nline") == "naïve 中文 emoji 👩‍💻\ttab\nline"
    once = visible(H)
    assert visible(once) == once and raw_controls(once) == set()
    assert visible("a\r\nb\rc") == "a\nb\\x0dc"
    assert visible("a\nb", one_line=True) == "a\\x0ab"


def test_a_renderer_that_forgets_is_still_safe() -> None:
    """The last layer: every console is a SafeConsole (no markup, segments made visible),
    whatever renderable carries the raw string."""
    from rich.table import Table

    table = Table("raw")
    table.add_row(H)
    for renderable in (H, Text(H), table):
        for color in (False, True):
            out = render_str(renderable, 300, color)
            assert "\x1b[2J" not in out and "\x9b" not in out and "\u202e" not in out
            assert "\x1b]0;" not in out and "\ud800" not in out
    assert "[red]x[/red]" in render_str("[red]x[/red]", 100, True)


def test_the_real_repl_shows_the_spoof_marked_and_runs_nothing_on_no(workdir: Path) -> None:
    """In a pseudo-terminal: the spoofing escapes arrive as visible text, never as the
    sequences themselves, and answering no leaves the disk as it was."""
    pexpect = pytest.importorskip("pexpect")
    from support.repl_spawn import spawn_repl

    script = {"lead": [{"text": "", "tool_calls": [{"name": "shell", "input": {
        "command": f"touch pwned {SPOOF}"}}]}, {"text": "Understood."}]}
    child = spawn_repl(workdir, script)
    try:
        child.send("go\r")
        child.expect("Choose 1, 2 or 3")
        shown = child.before
        assert "\x1b[2K\x1b[1G│ lead" not in shown and "\x1b[1G│" not in shown
        assert "\\x1b" in shown and "control or invisible characters" in shown
        child.send("3")
        child.expect(r"do instead\?")
        child.send("\r")
        child.expect("Understood.")
        child.send("\x04")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert not (workdir / "pwned").exists()
