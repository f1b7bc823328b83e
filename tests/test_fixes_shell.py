"""A trailing backslash is never a simple command: bash reads it differently by context (a
line continuation once the input spans a newline), so an allow rule must not match it."""

from __future__ import annotations

from agent_cli.permissions.rules import parse_rule
from agent_cli.permissions.shell_analysis import analyze as parse_command


def test_a_trailing_backslash_is_not_a_simple_command():
    cmd = parse_command("printf '%s\\0' START '\n'\\")
    assert not cmd.simple
    assert "cannot read" in cmd.reason


def test_an_allow_rule_does_not_match_a_command_ending_in_a_backslash():
    rule = parse_rule("Bash(ls *)")
    assert rule.matches("Bash", "ls x")
    assert not rule.matches("Bash", "ls x\\")
