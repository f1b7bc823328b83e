"""allowedDomains through the filtering proxy outside the sandbox: an allowed loopback
server answers (plain HTTP and a CONNECT tunnel), one on a port allowedDomains does not name
receives nothing and the result says why; in the REPL the first request to a new domain
asks, and `2` saves it to settings.local.json."""

from __future__ import annotations

import json
import sys

from support.sandbox import RecordingServer, Shell, need_bwrap, sandboxed_runtime
from support.team import FakeHuman

from agent_cli.sandbox.proxy import domain_allowed

GET = (f"{sys.executable} -c \"import sys, urllib.request as u; "
       "print(u.urlopen(sys.argv[1], timeout=10).read().decode())\"")
TUNNEL = (f"{sys.executable} -c \"import sys, http.client as h; "
          "c = h.HTTPConnection('127.0.0.1', 3128, timeout=10); "
          "c.set_tunnel('127.0.0.1', int(sys.argv[1])); c.request('GET', '/tunnel'); "
          "print(c.getresponse().read().decode())\"")


def test_domain_patterns():
    assert domain_allowed("pypi.org", 443, ["pypi.org"])
    assert domain_allowed("API.github.com.", 443, ["*.github.com"])
    assert not domain_allowed("github.com", 443, ["*.github.com"])
    assert not domain_allowed("evilpypi.org", 443, ["pypi.org"])
    assert domain_allowed("127.0.0.1", 8000, ["127.0.0.1:8000"])
    assert not domain_allowed("127.0.0.1", 8001, ["127.0.0.1:8000"])


def test_only_the_allowed_server_is_reached_through_the_proxy(workdir, cleanup, loopback):
    need_bwrap()
    port, seen = loopback.port, loopback.seen
    other = RecordingServer()
    try:
        rt = sandboxed_runtime(workdir, {"network": {"allowedDomains": [f"127.0.0.1:{port}"]}})
        cleanup(rt)
        shell = Shell(rt)
        out = shell(f"{GET} http://127.0.0.1:{port}/allowed")
        assert not out.is_error and "secret-from-loopback" in out.content, out.content
        out = shell(f"{TUNNEL} {port}")
        assert not out.is_error and "secret-from-loopback" in out.content, out.content
        assert seen == ["/allowed", "/tunnel"]
        out = shell(f"{GET} http://127.0.0.1:{other.port}/blocked")
        assert out.is_error and other.seen == []
        assert ("[sandbox: network access refused by the sandbox: 127.0.0.1 is not in "
                "sandbox.network.allowedDomains]") in out.content
    finally:
        other.close()


def test_the_repl_asks_at_the_first_request_and_2_saves_the_domain(workdir, cleanup,
                                                                   loopback):
    need_bwrap()
    port, seen = loopback.port, loopback.seen
    rt = sandboxed_runtime(workdir)
    cleanup(rt)
    human = FakeHuman(rt, lambda req: "allow_always")
    try:
        out = Shell(rt)(f"{GET} http://127.0.0.1:{port}/first; {GET} http://127.0.0.1:{port}/2")
    finally:
        human.close()
    assert not out.is_error and seen == ["/first", "/2"], out.content
    assert [r.summary for r in human.asked] == ["network access to 127.0.0.1"]  # once only
    local = json.loads((workdir / ".agent-cli" / "settings.local.json").read_text())
    assert local["sandbox"]["network"]["allowedDomains"] == ["127.0.0.1"]


def test_headless_refuses_a_domain_nobody_allowed(workdir, cleanup, loopback):
    need_bwrap()
    port, seen = loopback.port, loopback.seen
    rt = sandboxed_runtime(workdir, {"network": {"allowedDomains": ["pypi.org"]}})
    cleanup(rt)
    out = Shell(rt)(f"{GET} http://127.0.0.1:{port}/x")
    assert out.is_error and seen == []
