"""What the user sees of the sandbox: /sandbox (availability, the install command when it is
missing, the mode, each agent's boundary), the banner line, the warning at start."""

from __future__ import annotations

import io
from types import SimpleNamespace

from rich.console import Console
from support.sandbox import Shell, need_bwrap, sandboxed_runtime

from agent_cli.events import Notice
from agent_cli.runtime import Runtime, RuntimeConfig
from agent_cli.sandbox.bwrap import Availability
from agent_cli.team.lead_hooks import LeadHooks
from agent_cli.ui.slash import dispatch
from agent_cli.ui.startup import banner


def _slash(rt, line: str) -> str:
    out = io.StringIO()
    lead = SimpleNamespace(agent=SimpleNamespace(usage=SimpleNamespace(total=0)), busy=False)
    ctx = SimpleNamespace(console=Console(file=out, width=200), runtime=rt, lead=lead,
                          settings=None)
    dispatch(ctx, line)
    return out.getvalue()


def test_sandbox_command_shows_mode_and_each_boundary(workdir, cleanup):
    need_bwrap()
    rt = sandboxed_runtime(workdir, {"filesystem": {"denyRead": ["secret.txt"]}})
    cleanup(rt)
    (workdir / "secret.txt").write_text("s")
    rt.roster.add("alice", "tester")
    text = _slash(rt, "/sandbox")
    assert "available: yes" in text and "mode: on (sandboxed commands run without asking)" in text
    assert "lead:" in text and "alice:" in text
    assert f"writes: {workdir}, a private /tmp" in text
    assert f"{workdir}/.tasks" in text and f"{workdir}/secret.txt" in text
    assert "network: none" in text


def test_unavailable_says_the_install_command_and_warns_at_start(workdir, cleanup):
    rt = sandboxed_runtime(workdir)
    cleanup(rt)
    rt.sandbox._availability = Availability(False, "bubblewrap (bwrap) is not installed",
                                            "sudo apt-get install bubblewrap")
    text = _slash(rt, "/sandbox")
    assert "available: no: bubblewrap (bwrap) is not installed" in text
    assert "install: sudo apt-get install bubblewrap" in text
    assert "commands go through the normal permission gate" in text
    seen: list = []
    rt.events.subscribe(seen.append)
    LeadHooks(rt).session_start()
    warnings = [e.text for e in seen if isinstance(e, Notice) and e.level == "warning"]
    assert any("sandbox unavailable" in w and "normal permission gate" in w for w in warnings)


def test_banner_says_one_line_when_on_and_nothing_when_off(workdir, cleanup):
    need_bwrap()
    rt = sandboxed_runtime(workdir)
    cleanup(rt)
    assert "sandbox on: each agent writes only its workspace; network: none" in \
        banner(rt, "demo").plain
    off = Runtime.open(workdir, RuntimeConfig(sandbox=False))
    cleanup(off)
    assert "sandbox" not in banner(off, "demo").plain
    assert "mode: off" in _slash(off, "/sandbox")


def test_team_counts_the_commands_that_ran_sandboxed(workdir, cleanup):
    need_bwrap()
    rt = sandboxed_runtime(workdir)
    cleanup(rt)
    shell = Shell(rt, "alice")
    assert not shell("true").is_error and not shell("touch x").is_error
    assert "sandboxed commands: alice 2" in _slash(rt, "/team")
