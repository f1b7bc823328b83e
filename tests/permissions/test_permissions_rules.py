"""Rule syntax and matching: every form, and every shell trick that must not slip past an allow."""

from __future__ import annotations

import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_cli.errors import UserError
from agent_cli.permissions.rules import InvalidRule, parse_rule
from agent_cli.permissions.shell_analysis import analyze as parse_command

BYPASSES = [
    "ls; rm -rf x",
    "ls && x",
    "ls || x",
    "ls | x",
    "ls $(x)",
    "ls `x`",
    "ls\nx",
    "ls\rx",
    "ls > f",
    "ls >> f",
    "ls < f",
    "ls 2> f",
    "ls &> f",
    "X=1 ls",
    "env X=1 ls",
    "ls & x",
    "ls a#; rm -rf x",
    'ls "$(rm -rf x)"',
    "ls <(rm x)",
    "ls >(rm x)",
    "(ls; x)",
    "{ ls; x; }",
    "ls 'unterminated",
    "ls |& x",
    "ls;x",
    "ls&&x",
]


# The same command spelled another way: only `ls` runs, so an `ls` rule allows it.
SAME_COMMAND = ["ls &", "(ls)", "{ ls; }", "ls ${X:=1}", "ls $'\\x3b'", "ls \\\nx", "ls;",
                "ls # comment", "ls; ls -l", "ls && ls"]


def allow(rule: str, command: str) -> bool:
    return parse_rule(rule).matches("Bash", command, "allow")


def deny(rule: str, command: str) -> bool:
    return parse_rule(rule).matches("Bash", command, "deny")


# ----- forms ---------------------------------------------------------------------------------
def test_bare_bash_rule_covers_every_shell_command():
    assert allow("Bash", "ls; rm -rf x")
    assert not parse_rule("Bash").matches("Write", "a.txt")


def test_exact_command_rule_matches_only_that_command():
    assert allow("Bash(git status)", "git status")
    assert allow("Bash(git status)", "git  'status'")  # same words after quoting
    assert not allow("Bash(git status)", "git status --short")
    assert not allow("Bash(git status)", "git statusx")
    assert not allow("Bash(git status)", "git")


@pytest.mark.parametrize("rule", ["Bash(npm run test *)", "Bash(npm run test:*)"])
def test_prefix_rule_matches_on_a_word_boundary(rule):
    assert allow(rule, "npm run test")
    assert allow(rule, "npm run test --watch src/a.js")
    assert not allow(rule, "npm run testx")
    assert not allow(rule, "npm run tes")
    assert not allow(rule, "npm run lint")


def test_star_rule_allows_every_command_it_can_read_but_not_file_redirections():
    assert allow("Bash(*)", "make build")
    assert allow("Bash(*)", "make build && make test")  # every part is a command: allowed
    assert not allow("Bash(*)", "make build > log.txt")  # a file write the rule does not name
    assert not allow("Bash(*)", "X=1 make build")
    assert not allow("Bash(*)", "{make,build}")  # the grammar cannot read it: never allowed


def test_path_rules_glob_relative_to_the_workdir():
    src = parse_rule("Write(src/**)")
    assert src.matches("Write", "src/a.py")
    assert src.matches("Write", "src/deep/er/b.py")
    assert not src.matches("Write", "tests/a.py")
    docs = parse_rule("Edit(docs/*.md)")
    assert docs.matches("Edit", "docs/a.md")
    assert not docs.matches("Edit", "docs/sub/a.md")  # * stays in one directory
    assert not docs.matches("Edit", "docs/a.py")
    assert parse_rule("Edit(**/*.md)").matches("Edit", "README.md")
    assert parse_rule("Edit(./notes.txt)").matches("Edit", "notes.txt")


def test_which_tools_a_file_rule_covers():
    # allow Edit(...) covers edit_file and write_file; allow Write(...) covers write_file only
    assert parse_rule("Edit").matches("Write", "a.py")
    assert parse_rule("Edit").matches("Edit", "a.py")
    assert parse_rule("Write").matches("Write", "a.py")
    assert not parse_rule("Write").matches("Edit", "a.py")
    # a deny rule of either family blocks both file tools
    assert parse_rule("Write(secrets/**)").matches("Edit", "secrets/k", "deny")
    assert not parse_rule("Edit").matches("Bash", "ls")
    assert not parse_rule("Read(**)").matches("Write", "a.py")


@pytest.mark.parametrize(
    "text",
    [
        "Bash(",
        "Bash()",
        "bash(ls)",
        "WebFetch(x)",
        "Bash(ls; rm *)",
        "Bash(ls * -l)",
        "Bash(ls $(x))",
        "Edit(../x)",
        "Read(a/../../x)",
        "Read(~root/x)",
        "Read(./)",
        "Read(//)",
        "Read(!x)",
        "Read(a\x1bb)",
        "",
        "Bash(ls)\nBash(rm)",
        42,
    ],
)
def test_invalid_rule_text_is_a_one_line_user_error(text):
    with pytest.raises(InvalidRule) as exc:
        parse_rule(text)
    assert isinstance(exc.value, UserError)
    assert "\n" not in str(exc.value) and "invalid rule" in str(exc.value)


# ----- shell bypasses -------------------------------------------------------------------------
@pytest.mark.parametrize("command", BYPASSES)
@pytest.mark.parametrize("rule", ["Bash(ls *)", "Bash(ls:*)"])
def test_prefix_allow_rules_never_cover_a_command_they_do_not_name(rule, command):
    assert not allow(rule, command), (rule, command)


@pytest.mark.parametrize("command", SAME_COMMAND)
@pytest.mark.parametrize("rule", ["Bash(ls *)", "Bash(ls:*)", "Bash(*)"])
def test_every_part_allowed_means_the_line_is_allowed(rule, command):
    assert allow(rule, command), (rule, command)


@pytest.mark.parametrize(
    "command",
    [c.replace("ls", "git status", 1) for c in BYPASSES] + ["git status; git push"],
)
def test_exact_allow_rule_never_matches_compound_commands(command):
    assert not allow("Bash(git status)", command)


def test_quoted_operators_are_just_arguments():
    assert allow("Bash(ls *)", "ls '; rm -rf x' \"a && b\"")
    assert allow("Bash(grep *)", "grep -n 'a|b' src")


@pytest.mark.parametrize(
    "command",
    [
        "ls; rm -rf x",
        "ls && rm x",
        "echo $(rm x)",
        'echo "`rm x`"',
        "X=1 rm x",
        "env X=1 rm x",
        "sudo rm -rf /",
        "> f rm x",
        "(rm x)",
        "bash -c 'rm -rf x'",
        "/bin/rm x",
        "ls | xargs rm",
        "timeout 5 rm x",
        "cat <(rm x)",
    ],
)
def test_deny_rule_wins_anywhere_in_a_compound_command(command):
    assert deny("Bash(rm *)", command)


def test_deny_rule_does_not_fire_on_quoted_text_or_other_commands():
    assert not deny("Bash(rm *)", "echo 'rm x'")
    assert not deny("Bash(rm *)", "git rm x")
    assert deny("Bash", "anything at all")


def test_parse_command_reports_why_a_line_is_not_simple():
    assert parse_command("ls -la").words == ("ls", "-la")
    assert parse_command("ls; x").reason == "several commands"
    assert parse_command("X=1 ls").reason == "leading variable assignment"
    assert parse_command("").reason == "empty command"


# ----- fuzzing -------------------------------------------------------------------------------
OPERATORS = [";", "&&", "||", "|", "&", "$(", "`", "\n", ">", ">>", "<", "2>", "<(", "|&", "("]
plain = st.text(alphabet="abcxyz-_./= ", min_size=0, max_size=8)


@settings(max_examples=400, deadline=None)
@given(before=plain, op=st.sampled_from(OPERATORS), after=plain.filter(lambda t: t.strip()))
def test_fuzz_allow_rules_never_match_an_unquoted_operator(before, op, after):
    command = f"ls {before}{op} rm {after}"
    for rule in ("Bash(ls *)", "Bash(ls:*)"):
        assert not allow(rule, command), command


# Quotes, escapes and operators mixed; no glob/brace/tilde characters so bash's words are
# exactly its parsed words. Whenever we call a line simple, bash must agree word for word.
tricky = st.text(alphabet="ab ;&|<>()$`'\"\\#=\n\t", min_size=0, max_size=12)


@settings(max_examples=250, deadline=None)
@given(tail=tricky)
def test_fuzz_a_line_we_call_simple_is_one_command_to_bash(tail, tmp_path_factory):
    command = "printf '%s\\0' START " + tail
    cmd = parse_command(command)
    if not cmd.simple:
        return
    run = subprocess.run(
        ["bash", "-c", command],
        cwd=tmp_path_factory.getbasetemp(),
        capture_output=True,
        timeout=10,
        env={},
    )
    assert run.returncode == 0, (command, run.stderr)
    argv = run.stdout.decode().split("\0")[:-1]
    assert argv == list(cmd.words[2:]), command


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_fuzz_parse_command_never_crashes(text):
    cmd = parse_command(text)
    assert cmd.simple == (cmd.words is not None)
    if cmd.simple:
        assert "`" not in text and "$(" not in text


def test_an_allow_rule_does_not_match_a_command_ending_in_a_backslash():
    rule = parse_rule("Bash(ls *)")
    assert rule.matches("Bash", "ls x")
    assert not rule.matches("Bash", "ls x\\")


def test_path_rules_follow_gitignore_and_claude_codes_anchors(monkeypatch, tmp_path):
    from agent_cli.permissions.gate import suggest_rule
    from agent_cli.permissions.path_rules import PathTarget

    assert parse_rule("Read(./.env)").matches("Read", "sub/.env")  # no slash: any depth
    assert not parse_rule("Read(/.env)").matches("Read", "sub/.env")  # /: the project root
    assert parse_rule("Read(/.env)").matches("Read", ".env")
    assert parse_rule("Read(keys/)").matches("Read", "keys/a/b")  # a directory and its files
    assert parse_rule("Read(#notes)").matches("Read", "#notes")  # a name, not a comment
    monkeypatch.setenv("HOME", str(tmp_path))
    inside = PathTarget.of(".ssh/id", (tmp_path,))
    assert parse_rule("Read(~/.ssh/**)").matches("Read", inside)
    assert parse_rule(f"Read(//{str(tmp_path).lstrip('/')}/.ssh/id)").matches("Read", inside)
    assert not parse_rule("Read(~/.ssh/**)").matches("Read", ".ssh/id")  # no absolute spelling
    # "don't ask again" never widens a top-level name to every depth
    assert suggest_rule("Write", "notes.txt") == "Write(/notes.txt)"
    assert not parse_rule("Write(/notes.txt)").matches("Write", "sub/notes.txt")
    assert suggest_rule("Write", "a[1].txt") == ""
