"""MCP servers through the official SDK: configuration, start in the background, tools as
agent tools, calls, a server that dies mid-call, HTTP on loopback, a clean stop."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from support.private import trust_record

from agent_cli.errors import UserError
from agent_cli.mcp.config import expand, load_specs, parse_servers
from agent_cli.mcp.manager import McpManager
from agent_cli.mcp.tools import tool_name
from agent_cli.tools.base import ToolContext

SERVER = str(Path(__file__).parents[1] / "support" / "mcp_server.py")


def stdio_entry(**extra: object) -> dict:
    return {"command": sys.executable, "args": [SERVER], **extra}


def manager(workdir: Path, servers: dict, origin: str = "flag", **kw) -> McpManager:
    specs = parse_servers(servers, origin, "test", os.environ)  # type: ignore[arg-type]
    return McpManager(workdir, specs, **kw)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead for our purposes
        with open(f"/proc/{pid}/stat", encoding="utf-8") as fh:
            return fh.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


def gone(pid: int, timeout: float = 10.0) -> bool:
    """Wait (on a pidfd, no polling) until process `pid` has exited."""
    import select

    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([fd], [], [], timeout)[0])
    finally:
        os.close(fd)


@pytest.fixture
def started(workdir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    pidfile = tmp_path / "pids"
    monkeypatch.setenv("FIXTURE_PIDFILE", str(pidfile))
    m = manager(workdir, {"fx": stdio_entry()})
    assert m.start() == ["fx"]
    assert m.wait_ready(30), m.describe()
    yield m, pidfile
    m.close()


def run(m: McpManager, name: str, args: dict, workdir: Path, cancel=None):
    tool = {t.name: t for t in m.tools()}[name]
    ctx = ToolContext(agent="lead", workdir=workdir)
    if cancel is not None:
        ctx.cancel = cancel
    return tool.run(tool.parse(args), ctx)


# ----- configuration ---------------------------------------------------------------------
def test_config_expands_variables_with_defaults() -> None:
    env = {"TOKEN": "t0k", "EMPTY": ""}
    assert expand("Bearer ${TOKEN}", env) == "Bearer t0k"
    assert expand("${MISSING:-fallback}/${EMPTY:-d}", env) == "fallback/d"
    specs = parse_servers({
        "a": {"command": "srv", "args": ["--key", "${TOKEN}"], "env": {"K": "${TOKEN}"}},
        "b": {"type": "http", "url": "http://127.0.0.1:${PORT:-9}/mcp",
              "headers": {"Authorization": "Bearer ${TOKEN}"}},
        "c": {"command": "srv", "args": ["${NOPE}"]},
        "d": {"type": "websocket", "url": "ws://x"},
        "bad name!": {"command": "x"},
    }, "project", ".mcp.json", env)
    a, b, c, d, bad = specs
    assert (a.args, dict(a.env), a.error) == (("--key", "t0k"), {"K": "t0k"}, "")
    assert (b.transport, b.url, dict(b.headers)) == (
        "http", "http://127.0.0.1:9/mcp", {"Authorization": "Bearer t0k"})
    assert c.error == "${NOPE} is not set"
    assert d.error and bad.error


def test_broken_project_file_is_one_problem_but_a_broken_flag_file_refuses(
        workdir: Path) -> None:
    (workdir / ".mcp.json").write_text("{not json", encoding="utf-8")
    problems: list[str] = []
    assert load_specs(workdir, [], env={}, problems=problems) == []
    assert len(problems) == 1 and ".mcp.json is not valid JSON" in problems[0]
    with pytest.raises(UserError, match="no such file"):
        load_specs(workdir, [str(workdir / "missing.json")], env={})
    flag = workdir / "flag.json"
    flag.write_text('{"mcpServers": []}', encoding="utf-8")
    with pytest.raises(UserError, match="'mcpServers' must be an object"):
        load_specs(workdir, [str(flag)], env={})


def test_config_that_is_a_fifo_or_symlink_is_refused_without_hanging(
        workdir: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text('{"mcpServers": {"x": {"command": "evil"}}}', encoding="utf-8")
    (workdir / ".mcp.json").symlink_to(secret)
    problems: list[str] = []
    assert load_specs(workdir, [], env={}, problems=problems) == []
    assert "not a regular file" in problems[0]
    (workdir / ".mcp.json").unlink()
    os.mkfifo(workdir / ".mcp.json")
    problems.clear()
    assert load_specs(workdir, [], env={}, problems=problems) == []
    assert "not a regular file" in problems[0]


def test_tool_names_are_safe_for_the_api() -> None:
    assert tool_name("github", "create_issue") == "mcp__github__create_issue"
    assert tool_name("fs", "read.file v2") == "mcp__fs__read_file_v2"
    assert len(tool_name("s" * 40, "t" * 80)) == 64


# ----- a real stdio server ---------------------------------------------------------------
def test_tools_are_listed_with_schema_and_read_only_hint(started) -> None:
    m, _ = started
    tools = {t.name: t for t in m.tools()}
    assert set(tools) == {f"mcp__fx__{n}" for n in ("echo", "touch", "crash", "slow", "picture")}
    assert tools["mcp__fx__echo"].read_hint and not tools["mcp__fx__touch"].read_hint
    spec = tools["mcp__fx__touch"].spec()
    assert spec.input_schema["required"] == ["path"]
    assert spec.input_schema["properties"]["path"]["type"] == "string"
    assert m.servers["fx"].status == "ready (5 tools)"


def test_calls_return_text_images_as_blocks_and_schema_errors_name_the_field(
        started, workdir: Path) -> None:
    m, _ = started
    assert run(m, "mcp__fx__echo", {"text": "hi"}, workdir).content == "echo: hi"
    out = run(m, "mcp__fx__picture", {}, workdir)
    assert out.content.startswith("Image fx/picture image 1: 2400x1200 PNG")
    assert "sent as 1568x784 PNG" in out.content and "a caption" in out.content
    [image] = out.media
    assert image.source.media_type == "image/png" and image.label.endswith("2400x1200")
    tool = {t.name: t for t in m.tools()}["mcp__fx__echo"]
    with pytest.raises(Exception, match="text: 3 is not of type 'string'"):
        tool.parse({"text": 3})
    with pytest.raises(Exception, match="'text' is a required property"):
        tool.parse({})


def test_stdio_server_runs_in_the_workdir(started, workdir: Path) -> None:
    m, _ = started
    out = run(m, "mcp__fx__touch", {"path": "from-mcp.txt"}, workdir)
    assert not out.is_error, out.content
    assert (workdir / "from-mcp.txt").read_text(encoding="utf-8") == "made by mcp"


def test_a_server_that_dies_mid_call_is_an_error_result_and_a_state(
        started, workdir: Path) -> None:
    m, pidfile = started
    out = run(m, "mcp__fx__crash", {}, workdir)
    assert out.is_error and "exited during the call" in out.content
    server = m.servers["fx"]
    assert server.state == "failed"
    assert "crashing on purpose" in server.status  # the server's last stderr line
    again = run(m, "mcp__fx__echo", {"text": "x"}, workdir)
    assert again.is_error and "is not running (failed: server exited" in again.content
    assert "mcp__fx__echo" in {t.name for t in m.tools()}  # the tools stay, answering errors
    pid = int(pidfile.read_text().split()[0])
    assert gone(pid)


def test_interrupting_a_call_cancels_it(started, workdir: Path) -> None:
    m, _ = started
    cancel = threading.Event()
    result: list = []
    worker = threading.Thread(
        target=lambda: result.append(run(m, "mcp__fx__slow", {"seconds": 30}, workdir, cancel)))
    worker.start()
    cancel.set()
    worker.join(10)
    assert not worker.is_alive()
    assert result[0].is_error and "interrupted" in result[0].content
    assert run(m, "mcp__fx__echo", {"text": "still"}, workdir).content == "echo: still"


def test_close_stops_every_server_process(workdir: Path, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    pidfile = tmp_path / "pids"
    monkeypatch.setenv("FIXTURE_PIDFILE", str(pidfile))
    m = manager(workdir, {"a": stdio_entry(), "b": stdio_entry()})
    m.start()
    assert m.wait_ready(30)
    pids = [int(x) for x in pidfile.read_text().split()]
    assert len(pids) == 2 and all(alive(p) for p in pids)
    m.close()
    assert all(gone(p, 0) for p in pids)  # close() returns once they have exited
    assert not [t for t in threading.enumerate() if t.name == "mcp-loop"]


def test_a_server_that_cannot_start_is_failed_with_the_reason(workdir: Path) -> None:
    m = manager(workdir, {
        "nocmd": {"command": "definitely-not-a-command-xyz"},
        "dies": {"command": sys.executable, "args": ["-c", "import sys; "
                                                      "print('boom: no config', file=sys.stderr)"]},
        "ok": stdio_entry(),
    }, startup_timeout=20)
    m.start()
    assert m.wait_ready(30)
    states = {s.name: s.status for s, _ in m.describe()}
    assert states["ok"] == "ready (5 tools)"
    assert states["nocmd"].startswith("failed:")
    assert states["dies"].startswith("failed:") and "boom: no config" in states["dies"]
    assert {t.name.split("__")[1] for t in m.tools()} == {"ok"}
    m.close()


# ----- trust -------------------------------------------------------------------------------
def test_project_servers_start_only_once_trusted_and_a_changed_command_asks_again(
        workdir: Path) -> None:
    servers = {"fx": stdio_entry()}
    m = manager(workdir, servers, origin="project")
    assert [s.name for s in m.needs_trust()] == ["fx"]
    assert m.start() == []
    assert m.servers["fx"].status == "not started: not trusted (.mcp.json)"
    assert m.answer_trust(m.needs_trust(), True) == ""
    saved = trust_record(workdir)
    assert saved["enabledMcpjsonServers"] == ["fx"]
    assert not (workdir / ".agent-cli" / "settings.local.json").exists()
    again = manager(workdir, servers, origin="project")
    assert again.needs_trust() == [] and [s.name for s in again.startable()] == ["fx"]
    changed = manager(workdir, {"fx": stdio_entry(args=[SERVER, "--evil"])}, origin="project")
    assert [s.name for s in changed.needs_trust()] == ["fx"]  # another definition: ask again
    refused = manager(workdir, servers, origin="project")
    refused.answer_trust(refused.needs_trust() or [refused.servers["fx"].spec], False)
    assert manager(workdir, servers, origin="project").startable() == []


# ----- HTTP on loopback ------------------------------------------------------------------
@pytest.fixture(params=["http", "sse"])
def web_server(request):
    kind = request.param
    proc = subprocess.Popen([sys.executable, SERVER, kind], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        line = proc.stdout.readline()  # printed once the socket listens
        assert line.startswith("PORT "), line
        path = "/sse" if kind == "sse" else "/mcp"
        yield kind, f"http://127.0.0.1:{int(line.split()[1])}{path}"
    finally:
        proc.kill()
        proc.wait(10)


def test_http_and_sse_servers_on_loopback(workdir: Path, web_server) -> None:
    kind, url = web_server
    m = manager(workdir, {"web": {"type": kind, "url": url, "headers": {"X-Test": "1"}}})
    m.start()
    assert m.wait_ready(30), m.describe()
    assert m.servers["web"].status == "ready (5 tools)"
    assert run(m, "mcp__web__echo", {"text": kind}, workdir).content == f"echo: {kind}"
    m.close()
