"""The macOS sandbox as agent-cli runs it: every sandboxed command goes through sandbox-exec
with the agent's generated profile, a private TMPDIR per command (removed after), and with
allowedDomains the filtering proxy on one localhost port, the only one the profile lets the
command reach. The wrapping and the proxy's TCP side are checked here on any system; the
commands themselves run under sandbox-exec only where macOS is."""

from __future__ import annotations

import http.client
import subprocess
import sys
from pathlib import Path

import pytest

from agent_cli.sandbox import manager
from agent_cli.sandbox.boundary import Boundary
from agent_cli.sandbox.config import SandboxSettings
from agent_cli.sandbox.proxy import DomainProxy
from agent_cli.sandbox.seatbelt import SANDBOX_EXEC


def _box(ws: Path) -> Boundary:
    return Boundary(ws, writable=[ws], readonly=[ws / ".git"], hidden=[ws / "secret"])


def test_a_command_is_wrapped_in_sandbox_exec_with_its_own_tmpdir(tmp_path):
    wrapped = manager.wrap_macos(_box(tmp_path), "touch x", None)
    tmp = Path(wrapped.env["TMPDIR"])
    try:
        assert wrapped.argv[0] == SANDBOX_EXEC and wrapped.argv[-3:] == ["bash", "-c",
                                                                         "touch x"]
        profile = wrapped.argv[2]
        assert f'(subpath "{tmp_path}")' in profile and f'(subpath "{tmp}")' in profile
        assert "(deny network*)" in profile and "localhost:" not in profile
        assert tmp.is_dir() and "HTTPS_PROXY" not in wrapped.env
    finally:
        wrapped.done()
    assert not tmp.exists()  # the command's temporary directory goes with it


def test_the_session_picks_the_macos_wrapping_on_macos(tmp_path, monkeypatch):
    sandbox = manager.Sandbox(SandboxSettings(enabled=True), tmp_path,
                              availability=manager.Availability(True))
    monkeypatch.setattr(manager.sys, "platform", "darwin")
    wrapped = sandbox.wrap("true", tmp_path, tmp_path)
    monkeypatch.undo()
    wrapped.done()
    assert wrapped.argv[0] == SANDBOX_EXEC


def test_allowed_domains_go_through_the_proxy_on_the_one_port_the_profile_allows(
        tmp_path, loopback):
    proxy = DomainProxy([f"127.0.0.1:{loopback.port}"])
    wrapped = manager.wrap_macos(_box(tmp_path), "curl ...", proxy)
    try:
        url = wrapped.env["HTTPS_PROXY"]
        port = int(url.rsplit(":", 1)[1])
        assert url == wrapped.env["http_proxy"] == f"http://127.0.0.1:{port}"
        assert f'(allow network-outbound (remote ip "localhost:{port}"))' in wrapped.argv[2]
        allowed = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        allowed.request("GET", f"http://127.0.0.1:{loopback.port}/through-the-proxy")
        assert allowed.getresponse().status == 200
        assert loopback.seen == ["/through-the-proxy"]
        refused = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        refused.request("GET", "http://127.0.0.1:9/elsewhere")
        assert refused.getresponse().status >= 400 and wrapped.blocked
    finally:
        wrapped.done()
        proxy.close()


@pytest.mark.skipif(sys.platform != "darwin", reason="sandbox-exec runs only on macOS")
def test_on_macos_a_write_outside_the_workspace_is_refused(tmp_path):
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    wrapped = manager.wrap_macos(_box(ws), f"touch {ws}/in; touch {outside}/out", None)
    try:
        subprocess.run(wrapped.argv, env=wrapped.env, cwd=ws, timeout=60)
    finally:
        wrapped.done()
    assert (ws / "in").exists() and not (outside / "out").exists()
