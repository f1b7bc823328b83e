"""One hook command as a real process: JSON on stdin, exit codes, JSON on stdout, the timeout
that kills the whole process group, a cancel, and the hooks settings shape."""

from __future__ import annotations

import json
import os
import select
import threading
from pathlib import Path

import pytest
from support.hooks import Hook, configure

from agent_cli.errors import UserError
from agent_cli.permissions.hook_process import run_hook_command
from agent_cli.permissions.hooks import HookSpec, load_hooks
from agent_cli.permissions.layers import SettingsLayers


def gone_within(pid: int, timeout: float) -> bool:
    """True once process `pid` has ended (waits on a pidfd, no polling)."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        ready, _, _ = select.select([fd], [], [], timeout)
        return bool(ready)
    finally:
        os.close(fd)


def test_stdin_json_reaches_the_hook_and_a_json_stdout_is_parsed(tmp_path: Path) -> None:
    hook = Hook(tmp_path, "h", stdout={"decision": "block", "reason": "nope"})
    reply = run_hook_command(hook.command, {"hook_event_name": "X", "n": 1}, tmp_path, 10)
    assert reply.code == 0 and reply.data == {"decision": "block", "reason": "nope"}
    assert hook.calls() == [{"hook_event_name": "X", "n": 1}]


@pytest.mark.parametrize("code, stdout, warning", [
    (0, "plain words", ""),
    (0, "{not json", "not valid JSON"),
    (2, None, ""),
    (1, None, "exit code 1: oops"),
    (7, None, "exit code 7: oops"),
])
def test_exit_codes_and_output(tmp_path: Path, code: int, stdout, warning: str) -> None:
    hook = Hook(tmp_path, "h", code=code, stdout=stdout, stderr="oops")
    reply = run_hook_command(hook.command, {}, tmp_path, 10)
    assert reply.code == code and reply.stderr == "oops" and reply.data is None
    assert (warning in reply.warning) if warning else reply.warning == ""


def test_a_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    command = f"sleep 60 & echo $! > {pidfile}; wait"
    reply = run_hook_command(command, {}, tmp_path, 0.5)
    assert reply.code is None and "timed out after 0.5s; killed" in reply.warning
    child = int(pidfile.read_text())
    assert gone_within(child, 5.0), "the hook's child outlived the timeout"


def test_a_cancel_stops_a_running_hook(tmp_path: Path) -> None:
    cancel = threading.Event()
    pidfile = tmp_path / "hook.pid"
    command = f"echo $$ > {pidfile}; exec sleep 60"
    timer = threading.Timer(0.3, cancel.set)
    timer.start()
    reply = run_hook_command(command, {}, tmp_path, 60, cancel)
    assert reply.code is None and reply.warning == "interrupted"
    assert gone_within(int(pidfile.read_text()), 5.0)


def test_a_hook_that_ignores_its_stdin_still_works(tmp_path: Path) -> None:
    reply = run_hook_command("exit 0", {"big": "x" * 1_000_000}, tmp_path, 10)
    assert reply.code == 0 and reply.warning == ""


def test_matchers_follow_claude_code(tmp_path: Path) -> None:
    def spec(m: str) -> HookSpec:
        import re
        pattern = None if m in ("", "*") or m.replace("|", "").replace("_", "").isalnum() \
            else re.compile(m)
        return HookSpec("PreToolUse", m, "true", 60, "project", pattern)

    assert spec("").matches("shell") and spec("*").matches("anything")
    assert spec("Bash").matches("shell") and not spec("Bash").matches("write_file")
    assert spec("Write|Edit").matches("edit_file") and not spec("Write|Edit").matches("shell")
    assert spec("shell").matches("shell") and not spec("she").matches("shell")
    assert spec("mcp__.*").matches("mcp__srv__tool") and not spec("mcp__.*").matches("shell")
    assert spec("^(write|edit)_file$").matches("write_file")


def test_hooks_from_every_layer_are_loaded_with_their_layer(
    workdir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = tmp_path / "user"
    monkeypatch.setenv("AGENT_CLI_HOME", str(user))
    user.mkdir()
    (user / "settings.json").write_text(json.dumps({"hooks": {"Stop": [
        {"hooks": [{"type": "command", "command": "echo user"}]}]}}))
    configure(workdir, {"PreToolUse": [("Bash", Hook(tmp_path, "p"))]})
    configure(workdir, {"SessionEnd": [("", Hook(tmp_path, "l"))],
                        "BeforeLunch": [("", Hook(tmp_path, "n"))]}, "settings.local.json")
    specs, warnings, _ = load_hooks(SettingsLayers(workdir))
    assert [(s.event, s.layer) for s in specs] == [
        ("Stop", "user"), ("PreToolUse", "project"), ("SessionEnd", "local")]
    assert specs[0].timeout_s == 60.0
    assert len(warnings) == 1 and "'BeforeLunch' is not supported" in warnings[0]


@pytest.mark.parametrize("hooks, says", [
    ([], "'hooks' must be an object"),
    ({"Stop": {}}, "hooks.Stop must be a list"),
    ({"Stop": [{"hooks": [{"type": "command"}]}]}, 'needs a "command"'),
    ({"Stop": [{"hooks": [{"command": "x", "timeout": -1}]}]}, "timeout must be"),
    ({"Stop": [{"matcher": 3, "hooks": []}]}, "matcher must be a string"),
])
def test_a_bad_hooks_shape_is_one_line_naming_the_file(workdir: Path, hooks, says: str) -> None:
    path = workdir / ".agent-cli" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"hooks": hooks}))
    with pytest.raises(UserError) as exc:
        load_hooks(SettingsLayers(workdir))
    assert str(path) in str(exc.value) and says in str(exc.value)
    assert "\n" not in str(exc.value)


def test_a_bad_regex_matcher_is_a_warning_and_its_hook_never_runs(workdir: Path) -> None:
    path = workdir / ".agent-cli" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "(unclosed", "hooks": [{"type": "command", "command": "true"}]}]}}))
    specs, warnings, _ = load_hooks(SettingsLayers(workdir))
    assert specs == [] and "not a valid regular expression" in warnings[0]


def test_slash_hooks_lists_each_hook_with_its_layer(workdir: Path, tmp_path: Path) -> None:
    from io import StringIO
    from types import SimpleNamespace

    from rich.console import Console

    from agent_cli.runtime import Runtime
    from agent_cli.ui.render import UiSettings
    from agent_cli.ui.slash import SlashContext, dispatch

    configure(workdir, {"PreToolUse": [("Bash", Hook(tmp_path, "p"))]}, timeout=5)
    configure(workdir, {"Stop": [("", Hook(tmp_path, "s"))],
                        "Bogus": [("", Hook(tmp_path, "b"))]}, "settings.local.json")
    rt = Runtime.open(workdir)
    buf = StringIO()
    ctx = SlashContext(Console(file=buf, width=400, color_system=None), rt,
                       SimpleNamespace(busy=False, agent=None), UiSettings())
    assert dispatch(ctx, "/hooks").ok
    rows = [[c.strip() for c in line.split("│")] for line in buf.getvalue().splitlines()
            if "│" in line]
    assert [(r[0], r[1], r[3], r[4]) for r in rows] == [
        ("PreToolUse", "Bash", "5s", "project"), ("Stop", "*", "60s", "local")]
    assert "warning: " in buf.getvalue() and "'Bogus' is not supported" in buf.getvalue()


def test_a_flood_of_output_is_capped_and_never_hangs(tmp_path: Path) -> None:
    from agent_cli.permissions.hook_process import OUTPUT_CAP

    reply = run_hook_command("head -c 5000000 /dev/zero | tr '\\0' x; "
                             "head -c 5000000 /dev/zero | tr '\\0' y >&2; exit 2",
                             {}, tmp_path, 30)
    assert reply.code == 2
    assert len(reply.stdout) <= OUTPUT_CAP + 100 and len(reply.stderr) <= OUTPUT_CAP + 100
    assert reply.stderr.endswith("[... output cut]")
