"""The policy: rule sources, settings.json load/save, corrupt settings, modes."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.hooks import trust_project

from agent_cli.errors import UserError
from agent_cli.permissions.policy import PermissionPolicy

SETTINGS = ".agent-cli/settings.json"
LOCAL = ".agent-cli/settings.local.json"  # where saved rules go


def write_settings(workdir, data, rel: str = SETTINGS) -> None:
    path = workdir / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    if rel == SETTINGS and not isinstance(data, str):
        trust_project(workdir)  # these tests are about rules: the human trusted the project

def test_rules_list_every_rule_with_its_source(workdir):
    write_settings(workdir, {"permissions": {"allow": ["Bash(git status)"], "deny": ["Edit"]}})
    policy = PermissionPolicy(workdir, allow=["Write(src/**)"], deny=["Bash(rm *)"])
    policy.add_rule("Bash(make)")
    got = [(e.rule, e.effect, e.source) for e in policy.rules()]
    assert got == [
        ("Bash(git status)", "allow", f"settings: {SETTINGS}"),
        ("Edit", "deny", f"settings: {SETTINGS}"),
        ("Write(src/**)", "allow", "--allow"),
        ("Bash(rm *)", "deny", "--deny"),
        ("Bash(make)", "allow", "session"),
    ]


@pytest.mark.parametrize(
    "content, hint",
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "top level"),
        ('{"permissions": {"allow": "Bash"}}', "list of strings"),
        ('{"permissions": {"allow": ["Bash(ls; rm *)"]}}', "invalid rule"),
        ('{"permissions": []}', "must be an object"),
    ],
)
def test_corrupt_settings_is_a_clear_error_naming_the_file_and_is_kept(workdir, content, hint):
    write_settings(workdir, content)
    with pytest.raises(UserError) as exc:
        PermissionPolicy(workdir)
    message = str(exc.value)
    assert "settings.json" in message and hint in message and "\n" not in message
    assert (workdir / SETTINGS).read_text() == content  # never overwritten


def test_saving_a_rule_to_corrupt_settings_refuses_and_keeps_the_file(workdir):
    policy = PermissionPolicy(workdir)
    write_settings(workdir, "{oops", LOCAL)
    with pytest.raises(UserError, match="settings.local.json"):
        policy.add_rule("Bash(ls)", save=True)
    assert (workdir / LOCAL).read_text() == "{oops"


def test_saved_rules_persist_and_other_keys_survive(workdir):
    write_settings(workdir, {"theme": "dark", "permissions": {"allow": []}}, LOCAL)
    policy = PermissionPolicy(workdir)
    entry = policy.add_rule("Bash(pytest *)", save=True)
    assert entry.source == f"settings: {LOCAL}" and entry.layer == "local"
    data = json.loads((workdir / LOCAL).read_text())
    assert data == {"theme": "dark", "permissions": {"allow": ["Bash(pytest *)"]}}
    again = PermissionPolicy(workdir)
    assert again.find("allow", "Bash", "pytest -q tests") is not None
    assert again.remove_rule("Bash(pytest *)")
    assert json.loads((workdir / LOCAL).read_text())["permissions"]["allow"] == []
    assert again.find("allow", "Bash", "pytest -q tests") is None
    assert not again.remove_rule("Bash(pytest *)")


def test_invalid_rule_from_a_flag_is_rejected_and_nothing_is_added(workdir):
    with pytest.raises(UserError, match="invalid rule"):
        PermissionPolicy(workdir, allow=["Bash(ls && rm *)"])
    policy = PermissionPolicy(workdir)
    with pytest.raises(UserError, match="invalid rule"):
        policy.add_rule("Nope(x)", save=True)
    assert policy.rules() == []
    assert not (workdir / ".agent-cli").exists()


def test_modes_and_cycle_order(workdir):
    policy = PermissionPolicy(workdir)
    assert policy.mode == "default"
    assert [policy.cycle_mode() for _ in range(3)] == ["acceptEdits", "plan", "default"]
    with pytest.raises(UserError, match="dangerously-skip-permissions"):
        policy.set_mode("bypassPermissions")
    assert policy.mode == "default"
    with pytest.raises(UserError, match="unknown permission mode"):
        policy.set_mode("yolo")
    bypass = PermissionPolicy(workdir, allow_bypass=True)
    seen = [bypass.cycle_mode() for _ in range(4)]
    assert seen == ["acceptEdits", "plan", "bypassPermissions", "default"]
    with pytest.raises(UserError):
        PermissionPolicy(workdir, mode="bypassPermissions")


def test_rules_saved_by_several_processes_at_once_are_all_kept(workdir):
    script = textwrap.dedent(
        """
        import sys
        from pathlib import Path
        from agent_cli.permissions.policy import PermissionPolicy
        policy = PermissionPolicy(Path(sys.argv[1]))
        for i in range(10):
            policy.add_rule(f"Bash(echo {sys.argv[2]}-{i})", save=True)
        """
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", script, str(workdir), f"p{n}"]) for n in range(4)
    ]
    assert [p.wait(timeout=60) for p in procs] == [0, 0, 0, 0]
    saved = json.loads((workdir / LOCAL).read_text())["permissions"]["allow"]
    assert sorted(saved) == sorted(f"Bash(echo p{n}-{i})" for n in range(4) for i in range(10))


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    content=st.one_of(
        st.binary(max_size=60).map(lambda b: b.decode("latin-1")),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.text(max_size=12),
            lambda kids: (
                st.lists(kids, max_size=3)
                | st.dictionaries(st.sampled_from(["permissions", "allow", "deny", "x"]), kids)
            ),
            max_leaves=8,
        ).map(json.dumps),
    )
)
def test_fuzz_hostile_settings_load_or_fail_with_a_user_error(workdir, content):
    write_settings(workdir, content)
    try:
        policy = PermissionPolicy(workdir)
    except UserError as exc:
        assert "settings.json" in str(exc)
    else:
        for entry in policy.rules():
            assert entry.source.startswith("settings")
    assert (workdir / SETTINGS).read_bytes() == content.encode("utf-8")  # never rewritten
