"""Claude Code's statusLine: the command reads the session's JSON on stdin and its first line
is what the toolbar shows; the prompt never waits for it; a repository's statusLine is held
until trusted (it is a command)."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from agent_cli.permissions.project_trust import widening, without_widening
from agent_cli.ui.status_line import StatusLine, status_command

WAIT = 30.0
SCRIPT = ("import json, sys; d = json.load(sys.stdin); "
          "print('\\x1b[31m' + d['model']['id'] + ' in ' + d['workspace']['current_dir']); "
          "print('second line')")


def test_the_first_line_of_the_commands_output_is_shown(tmp_path: Path) -> None:
    drawn = threading.Event()
    line = StatusLine(f"{sys.executable} -c \"{SCRIPT}\"", tmp_path,
                      lambda: {"model": {"id": "claude-x"},
                               "workspace": {"current_dir": str(tmp_path)}},
                      drawn.set)
    assert line.text() == ""  # nothing yet: the run is in the background
    assert drawn.wait(WAIT)  # the toolbar is redrawn when the line arrives
    shown = line.text()
    assert "\x1b" not in shown  # escapes made visible, never sent to the terminal
    assert f"claude-x in {tmp_path}" in shown and "second line" not in shown


def test_a_failing_command_shows_nothing_and_breaks_nothing(tmp_path: Path) -> None:
    drawn = threading.Event()
    line = StatusLine("printf 'oops\\n' >&2; exit 3", tmp_path, dict, drawn.set)
    line.text()
    assert line.ran.wait(WAIT)
    assert line.text() == "" and not drawn.is_set()  # stderr is not shown; nothing redrawn


def test_the_setting_names_a_command_and_a_repositorys_is_held() -> None:
    raw = {"type": "command", "command": "~/.claude/statusline.sh"}
    assert status_command(raw) == "~/.claude/statusline.sh"
    assert status_command({"type": "other"}) == "" and status_command("x") == ""
    data = {"statusLine": raw, "model": "opus"}
    assert widening(data) == {"statusLine": raw}
    assert without_widening(data) == {"model": "opus"}


def test_the_repl_toolbar_shows_the_users_status_line(workdir: Path, tmp_path: Path,
                                                      monkeypatch) -> None:
    import json

    from support.repl_harness import Harness, make_runtime

    home = tmp_path / "claude-home"
    home.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home))
    (home / "settings.json").write_text(json.dumps({"statusLine": {
        "type": "command", "command": "read -r j; echo \"branch-main ${#j}\""}}),
        encoding="utf-8")
    rt, _model = make_runtime(workdir, {"lead": []})
    h = Harness(rt).start()
    try:
        h.repl._toolbar()  # the first draw starts the command
        assert h.repl.status_line is not None and h.repl.status_line.ran.wait(WAIT)
        text = "".join(t for _, t in h.repl._toolbar())
        assert text.startswith(" branch-main ") and text.split("\n")[0] != " branch-main 0"
    finally:
        h.quit()
