"""Keeping a permission rule: "allow always" adds a session rule and says how to keep it;
`/permissions allow|deny RULE --save` and `/permissions save RULE` write the local layer,
.agent-cli/settings.local.json (which a later session reads); bad input is one error line and
writes nothing."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from types import SimpleNamespace

import pytest
from rich.console import Console
from support.repl_harness import WAIT, Harness, ask_from_thread, make_runtime

from agent_cli.permissions.policy import PermissionPolicy
from agent_cli.ui.render import UiSettings
from agent_cli.ui.slash import SlashContext, dispatch

LOCAL = ".agent-cli/settings.local.json"


class IdleLead:
    agent = None
    busy = False


def run(policy: PermissionPolicy, line: str) -> tuple[bool, str]:
    buf = StringIO()
    ctx = SlashContext(Console(file=buf, width=200, color_system=None),
                       SimpleNamespace(policy=policy), IdleLead(), UiSettings())
    result = dispatch(ctx, line)
    return result.ok, buf.getvalue()


def settings(workdir: Path) -> dict:
    return json.loads((workdir / LOCAL).read_text())["permissions"]


def test_allow_and_deny_with_save_reach_settings_and_the_next_session(workdir: Path) -> None:
    policy = PermissionPolicy(workdir)
    ok, out = run(policy, "/permissions allow Bash(git status) --save")
    assert ok and f"added allow rule Bash(git status) (saved to {LOCAL})" in out
    ok, out = run(policy, "/permissions deny Bash(rm *) --save")
    assert ok and "added deny rule Bash(rm *)" in out
    assert settings(workdir) == {"allow": ["Bash(git status)"], "deny": ["Bash(rm *)"]}
    later = PermissionPolicy(workdir)
    assert {(e.rule, e.effect, e.source) for e in later.rules()} == {
        ("Bash(git status)", "allow", f"settings: {LOCAL}"),
        ("Bash(rm *)", "deny", f"settings: {LOCAL}"),
    }
    # remove is symmetric: the saved rule leaves the file as well
    ok, _ = run(later, "/permissions remove Bash(git status)")
    assert ok and settings(workdir)["allow"] == []


def test_allow_without_save_is_this_session_only(workdir: Path) -> None:
    policy = PermissionPolicy(workdir)
    ok, out = run(policy, "/permissions allow Bash(make test)")
    assert ok and "(this session)" in out
    assert not (workdir / ".agent-cli").exists()
    assert PermissionPolicy(workdir).rules() == []


def test_save_persists_an_existing_session_rule(workdir: Path) -> None:
    policy = PermissionPolicy(workdir)
    run(policy, "/permissions deny Bash(curl *)")
    ok, out = run(policy, "/permissions save Bash(curl *)")
    assert ok and "saved deny rule Bash(curl *) to .agent-cli/settings.local.json" in out
    assert settings(workdir)["deny"] == ["Bash(curl *)"]
    assert [e.rule for e in PermissionPolicy(workdir).rules()] == ["Bash(curl *)"]
    ok, out = run(PermissionPolicy(workdir), "/permissions save Bash(curl *)")
    assert ok and "already in .agent-cli/settings.local.json" in out


def test_bad_save_requests_are_one_line_and_write_nothing(workdir: Path) -> None:
    policy = PermissionPolicy(workdir)
    for line, says in [
        ("/permissions save Bash(git push)", "error: no session rule 'Bash(git push)' to save"),
        ("/permissions save", "error: usage: /permissions"),
        ("/permissions allow Bash(ls *x) --save", "error:"),
        ("/permissions remove Bash(ls) --save", "error: --save goes with allow, deny or ask"),
        ("/permissions keep Bash(ls)", "error: usage: /permissions"),
    ]:
        ok, out = run(policy, line)
        assert not ok and out.startswith(says) and out.count("\n") == 1, (line, out)
    assert not (workdir / ".agent-cli").exists()
    assert policy.rules() == []


def test_a_corrupt_settings_file_is_named_and_kept(workdir: Path) -> None:
    policy = PermissionPolicy(workdir)
    run(policy, "/permissions allow Bash(make)")
    path = workdir / LOCAL
    path.parent.mkdir()
    path.write_text("{not json")
    ok, out = run(policy, "/permissions save Bash(make)")
    assert not ok and "settings.local.json is not valid JSON" in out
    assert path.read_text() == "{not json"


@pytest.fixture
def harness(workdir: Path):
    rt, _ = make_runtime(workdir, {})
    h = Harness(rt).start()
    yield h
    h.quit()
    rt.close(2.0)


def test_dont_ask_again_at_an_approval_saves_the_rule_to_the_local_layer(
    harness: Harness,
) -> None:
    rt = harness.rt
    asker, box = ask_from_thread(rt, "alice", "python main.py")
    text = harness.screen.wait_for("what to do differently")
    # The three choices (issue 5); "don't ask again" saves to the local layer (issue 15).
    choices = [line.strip("│ ") for line in text.splitlines()
               if line.startswith("│   ") and line.strip("│ ")]
    assert choices == ["1 Yes",
                       "2 Yes, and don't ask again for Bash(python main.py) (saves it to "
                       ".agent-cli/settings.local.json)",
                       "3 No, and tell alice what to do differently"]
    harness.send("2")
    asker.join(WAIT)
    assert box["decision"].answer == "allow_always"
    out = harness.screen.wait_for("(saved to .agent-cli/settings.local.json)")
    assert "alice allowed; rule added: Bash(python main.py)" in out
    assert settings(rt.workdir)["allow"] == ["Bash(python main.py)"]
    assert not (rt.workdir / ".agent-cli" / "settings.json").exists()  # never the project
    assert PermissionPolicy(rt.workdir).find("allow", "Bash", "python main.py") is not None
