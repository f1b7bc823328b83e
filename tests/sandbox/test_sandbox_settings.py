"""Sandbox settings in Claude Code's names, from every layer and the flags; a repository may
turn the sandbox on (narrowing) but its widening parts wait for the human's trust."""

from __future__ import annotations

import pytest
from support.sandbox import write_settings

from agent_cli.permissions.layers import SettingsLayers
from agent_cli.sandbox.config import SandboxSettingsError, resolve

FULL = {"enabled": True, "autoAllowBashIfSandboxed": True, "allowUnsandboxedCommands": False,
        "failIfUnavailable": True, "excludedCommands": ["docker"],
        "filesystem": {"allowWrite": ["~/.cache/pip"], "denyRead": ["~/.ssh"]},
        "network": {"allowedDomains": ["pypi.org", "*.github.com"],
                    "allowLocalBinding": False}}


def test_every_key_is_read_in_claude_codes_names(workdir):
    write_settings(workdir, {"sandbox": FULL})
    got = SettingsLayers(workdir).sandbox_settings()
    assert got.enabled and got.auto_allow and not got.allow_unsandboxed
    assert got.fail_if_unavailable and got.excluded_commands == ("docker",)
    assert got.allow_write == ("~/.cache/pip",) and got.deny_read == ("~/.ssh",)
    assert got.allowed_domains == ("pypi.org", "*.github.com")


def test_flags_win_over_every_layer(workdir):
    write_settings(workdir, {"sandbox": {"enabled": True}})
    layers = SettingsLayers(workdir)
    assert not layers.sandbox_settings(flag=False).enabled
    write_settings(workdir, {"sandbox": {"enabled": False}})
    assert layers.sandbox_settings(flag=True).enabled


def test_a_wrong_type_names_the_file_and_key(workdir):
    write_settings(workdir, {"sandbox": {"enabled": "yes"}})
    with pytest.raises(SandboxSettingsError, match=r"settings.local.json: 'sandbox.enabled'"):
        SettingsLayers(workdir).sandbox_settings()


def test_lists_gather_from_every_layer_and_scalars_take_the_highest():
    rows = [("user", "u", {"sandbox": {"enabled": True, "filesystem": {"denyRead": ["/a"]}}}),
            ("local", "l", {"sandbox": {"enabled": False, "filesystem": {"denyRead": ["/b"]}}})]
    got = resolve(rows)
    assert not got.enabled and got.deny_read == ("/a", "/b")


def test_the_repository_may_turn_it_on_without_trust(workdir):
    write_settings(workdir, {"sandbox": {"enabled": True,
                                         "filesystem": {"denyRead": ["secrets"]}}}, "project")
    layers = SettingsLayers(workdir)
    assert layers.held() is None  # nothing widens: nothing to ask
    got = layers.sandbox_settings()
    assert got.enabled and got.deny_read == ("secrets",)
    assert not got.auto_allow  # the repository alone never makes commands run unasked


def test_the_repositorys_widening_parts_wait_for_trust(workdir):
    write_settings(workdir, {"sandbox": FULL | {"allowUnsandboxedCommands": True}}, "project")
    layers = SettingsLayers(workdir)
    held = layers.held()
    assert held is not None
    assert any("allowedDomains" in item for item in held.sandbox)
    assert "sandbox.filesystem.allowWrite" in held.summary()
    got = layers.sandbox_settings()
    assert got.enabled and got.fail_if_unavailable  # narrowing parts apply
    assert got.allowed_domains == () and got.allow_write == () and got.excluded_commands == ()
    assert not got.auto_allow
    layers.trust(held)
    got = SettingsLayers(workdir).sandbox_settings()
    assert got.allowed_domains == ("pypi.org", "*.github.com") and got.auto_allow


def test_the_repository_cannot_turn_off_the_users_sandbox_unasked(workdir, tmp_path):
    user = tmp_path / "home"
    user.mkdir()
    (user / "settings.json").write_text('{"sandbox": {"enabled": true}}')
    write_settings(workdir, {"sandbox": {"enabled": False}}, "project")
    layers = SettingsLayers(workdir, user)
    assert layers.held() is not None
    got = layers.sandbox_settings()
    assert got.enabled and got.auto_allow  # the user turned it on: auto-allow defaults on


def test_the_trust_question_and_permissions_list_the_held_sandbox_keys(workdir):
    from agent_cli.ui.project_trust_view import held_rules, settings_question

    write_settings(workdir, {"sandbox": {"network": {"allowedDomains": ["evil.example"]}}},
                   "project")
    held = SettingsLayers(workdir).held()
    asked = settings_question(held, None).plain
    assert 'sandbox.network.allowedDomains=["evil.example"]' in asked
    assert "not trusted, not applied" in held_rules(held).plain


def test_the_flags_reach_the_runtime_config(workdir, capsys):
    from agent_cli.cli import build_parser, main, runtime_config

    parse = build_parser().parse_args
    assert runtime_config(parse(["-C", str(workdir), "--sandbox"])).sandbox is True
    assert runtime_config(parse(["-C", str(workdir), "--no-sandbox"])).sandbox is False
    assert runtime_config(parse(["-C", str(workdir)])).sandbox is None
    with pytest.raises(SystemExit) as exited:
        main(["-C", str(workdir), "--sandbox", "--no-sandbox", "-p", "hi"])
    assert exited.value.code == 2 and "not allowed with argument" in capsys.readouterr().err
