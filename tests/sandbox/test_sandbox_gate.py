"""What asks when the sandbox is on: sandboxed commands run unasked under auto-allow (deny
and ask rules still win), leaving the sandbox always asks, excluded commands take the normal
gate, and an unavailable sandbox either falls back to the gate or, with failIfUnavailable,
runs nothing. Effects are checked on disk and in the audit log."""

from __future__ import annotations

from support.sandbox import Shell, need_bwrap, sandboxed_runtime
from support.team import FakeHuman

from agent_cli.permissions.audit import AuditLog
from agent_cli.sandbox.bwrap import Availability


def _audit(rt) -> list[dict]:
    return AuditLog(rt.workdir / ".team" / "audit.jsonl").entries()


def test_a_sandboxed_command_runs_without_asking_and_the_audit_says_sandboxed(workdir, cleanup):
    need_bwrap()
    rt = sandboxed_runtime(workdir)
    cleanup(rt)
    out = Shell(rt)("touch new.txt && echo made")
    assert not out.is_error, out.content
    assert (workdir / "new.txt").exists()
    last = _audit(rt)[-1]
    assert last["source"] == "sandboxed" and last["sandboxed"] is True


def test_deny_and_ask_rules_still_win_over_auto_allow(workdir, cleanup):
    need_bwrap()
    rt = sandboxed_runtime(workdir, deny=["Bash(rm *)"])
    cleanup(rt)
    (workdir / "keep.txt").write_text("x")
    out = Shell(rt)("rm keep.txt")
    assert out.is_error and "Denied by rule Bash(rm *)" in out.content
    assert (workdir / "keep.txt").exists()
    rt.policy.add_rule("Bash(touch *)", "ask")
    out = Shell(rt)("touch asked.txt")  # headless: an ask is a denial
    assert out.is_error and "no human was available" in out.content
    assert not (workdir / "asked.txt").exists()


def test_leaving_the_sandbox_always_asks_even_under_an_allow_rule(workdir, cleanup, outside):
    need_bwrap()
    rt = sandboxed_runtime(workdir, allow=["Bash"])
    cleanup(rt)
    out = Shell(rt)(f"touch {outside / 'x'}", dangerouslyDisableSandbox=True)
    assert out.is_error and "no human was available" in out.content
    assert "outside the sandbox" in out.content and not (outside / "x").exists()
    human = FakeHuman(rt, lambda req: "allow_once")
    try:
        out = Shell(rt)(f"echo hi > {outside / 'out.txt'}", dangerouslyDisableSandbox=True)
    finally:
        human.close()
    assert not out.is_error and (outside / "out.txt").read_text() == "hi\n"
    assert human.asked and "dangerouslyDisableSandbox" in human.asked[0].reason
    assert _audit(rt)[-1]["sandboxed"] is False


def test_leaving_is_impossible_when_unsandboxed_commands_are_off(workdir, cleanup, outside):
    need_bwrap()
    rt = sandboxed_runtime(workdir, {"allowUnsandboxedCommands": False},
                           permission_mode="bypassPermissions", allow_bypass=True)
    cleanup(rt)
    target = outside / "escaped.txt"
    out = Shell(rt)(f"touch {target}", dangerouslyDisableSandbox=True)
    assert out.is_error and "allowUnsandboxedCommands is false" in out.content
    assert not target.exists()


def test_an_excluded_command_goes_through_the_normal_gate(workdir, cleanup, outside):
    need_bwrap()
    rt = sandboxed_runtime(workdir, {"excludedCommands": ["touch"]})
    cleanup(rt)
    out = Shell(rt)("touch plain.txt")
    assert out.is_error and "no human was available" in out.content
    assert not (workdir / "plain.txt").exists()
    rt.policy.add_rule("Bash(touch *)")
    target = outside / "excluded-outside.txt"
    assert not Shell(rt)(f"touch {target}").is_error
    assert target.exists()  # it ran outside the sandbox, as the user configured


def test_unavailable_warns_and_falls_back_to_the_normal_gate(workdir, cleanup):
    rt = sandboxed_runtime(workdir)
    cleanup(rt)
    rt.sandbox._availability = Availability(False, "bwrap is not installed", "apt")
    assert "unavailable" in rt.sandbox.banner()
    out = Shell(rt)("touch x.txt")
    assert out.is_error and "no human was available" in out.content  # asked, as without it
    rt.policy.add_rule("Bash(touch *)")
    assert not Shell(rt)("touch x.txt").is_error and (workdir / "x.txt").exists()


def test_fail_if_unavailable_runs_no_shell_command_at_all(workdir, cleanup):
    rt = sandboxed_runtime(workdir, {"failIfUnavailable": True}, allow=["Bash"])
    cleanup(rt)
    rt.sandbox._availability = Availability(False, "bwrap is not installed", "apt")
    out = Shell(rt)("touch x.txt")
    assert out.is_error and "failIfUnavailable" in out.content
    assert not (workdir / "x.txt").exists()


def test_auto_allow_off_asks_as_usual_but_still_confines(workdir, cleanup, outside):
    need_bwrap()
    rt = sandboxed_runtime(workdir, {"autoAllowBashIfSandboxed": False}, allow=["Bash"])
    cleanup(rt)
    target = outside / "allowed-but-confined.txt"
    out = Shell(rt)(f"touch {target}")
    assert out.is_error and not target.exists()
    assert f"write outside the sandbox refused: {target}" in out.content


def test_a_success_that_prints_an_error_text_gets_no_sandbox_note(workdir, cleanup):
    need_bwrap()
    rt = sandboxed_runtime(workdir)
    cleanup(rt)
    out = Shell(rt)("echo \"touch: cannot touch '/etc/x': Read-only file system\"")
    assert not out.is_error and "[sandbox:" not in out.content
