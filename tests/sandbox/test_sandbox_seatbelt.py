"""The macOS Seatbelt profile, checked on its text (it runs only on macOS): writes allowed
in the workspace and denied again in the protected paths after that, secrets unreadable,
no network but the proxy's port, no signals outside the sandbox, hostile paths refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_cli.sandbox.boundary import Boundary
from agent_cli.sandbox.seatbelt import ProfileError, profile, quote, seatbelt_argv

WS = Path("/Users/u/proj")


def _box(**extra) -> Boundary:
    return Boundary(WS, writable=[WS], readonly=[WS / ".git", WS / ".tasks"],
                    hidden=[Path("/Users/u/.ssh")], **extra)


def test_writes_are_denied_then_allowed_in_the_workspace_then_denied_in_protected_paths():
    text = profile(_box(), Path("/private/tmp/agent-cli-1"))
    lines = text.splitlines()
    assert lines[:3] == ["(version 1)", "(allow default)", "(deny file-write*)"]
    allow = text.index("(allow file-write*")
    deny_again = text.index("(deny file-write*\n")
    assert allow < deny_again  # the later rule wins: protected paths stay read-only
    assert '(subpath "/Users/u/proj")' in text[allow:deny_again]
    assert '(subpath "/private/tmp/agent-cli-1")' in text[allow:deny_again]
    assert '(subpath "/Users/u/proj/.git")' in text[deny_again:]
    assert '(deny file-read*\n  (subpath "/Users/u/.ssh")\n)' in text


def test_network_is_only_the_proxy_port():
    assert "(deny network*)" in profile(_box(), Path("/tmp/x"))
    assert "remote ip" not in profile(_box(), Path("/tmp/x"))
    text = profile(_box(), Path("/tmp/x"), proxy_port=3128)
    assert text.index("(deny network*)") < text.index(
        '(allow network-outbound (remote ip "localhost:3128"))')


def test_signals_stay_inside_the_sandbox():
    text = profile(_box(), Path("/tmp/x"))
    assert "(deny signal)\n(allow signal (target same-sandbox))" in text


def test_quotes_and_newlines_in_paths():
    assert quote('/a "b"\\c') == '"/a \\"b\\"\\\\c"'
    with pytest.raises(ProfileError):
        quote('/a\n(allow default)')
    box = Boundary(WS, writable=[Path('/x")\n(allow file-write* (subpath "/')])
    with pytest.raises(ProfileError):
        profile(box, Path("/tmp/x"))


def test_argv_runs_bash_under_sandbox_exec():
    argv = seatbelt_argv(_box(), "make test", Path("/tmp/x"))
    assert argv[:2] == ["/usr/bin/sandbox-exec", "-p"] and argv[-3:] == ["bash", "-c",
                                                                         "make test"]
